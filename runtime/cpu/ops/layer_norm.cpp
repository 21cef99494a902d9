// LayerNorm on the CPU: each NHWC pixel's channels, which lie side by side,
// through ops::layer_norm_levels, the oracle's own function, or its AVX-512
// or AVX2 form (layer_norm_vnni.cpp, layer_norm_avx2.cpp) where the CPU has
// it; pixels shared among the threads.
#include "common/error.h"
#include "graph/ops/layer_norm.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/layer_norm_simd.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
ops::LayerNormLevels levels(const NodeView& v) {
  const NodeQuant& in = v.model.quant[v.node().inputs[0]];
  return {v.output().c, in.scale, v.quant().scale, v.input_zero_point(), v.quant().zero_point, v.node().epsilon};
}

int64_t pixels(const KernelArgs& a) { return a.batch * a.node.output().h * a.node.output().w; }

// (A layer norm's input is never wide: a model file's check_bits lets only dense convs read int16.)
void run(const KernelArgs& a) {
  const ops::LayerNormLevels p = levels(a.node);
  const int64_t C = p.channels, count = pixels(a);
  parallel_for(count, count * C >= kMinParallelWork,
               [&](int64_t i) { ops::layer_norm_levels(a.inputs[0] + i * C, p, a.y + i * C); });
}

std::string can_implement_vnni(const NodeView& v) {
  if (const std::string why = runs_every_node_on_vnni(v); !why.empty()) return why;
  if (v.output().c > kMostVectorLayerNormChannels) return "more channels than its int32 statistics hold";
  return "";
}

std::string can_implement_avx2(const NodeView& v) {
  if (const std::string why = runs_every_node_on_avx2(v); !why.empty()) return why;
  if (v.output().c > kMostVectorLayerNormChannels) return "more channels than its int32 statistics hold";
  if (v.output().c % 16) return std::to_string(v.output().c) + " channels: the AVX2 kernel takes a multiple of 16";
  return "";
}

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  avx2::layer_norm(a.inputs[0], pixels(a), levels(a.node), a.y);
#else
  fail("layer_norm-avx2: this build has no AVX2 kernels");
#endif
}

void run_vnni(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  vnni::layer_norm(a.inputs[0], pixels(a), levels(a.node), a.y);
#else
  fail("layer_norm-avx512: this build has no AVX-512 kernels");
#endif
}
}  // namespace

extern const Kernel layer_norm_vnni_kernel = {Op::LayerNorm, "layer_norm-avx512", KernelPath::Avx512Vnni,
                                              can_implement_vnni, nullptr, run_vnni};
extern const Kernel layer_norm_avx2_kernel = {Op::LayerNorm, "layer_norm-avx2", KernelPath::Avx2,
                                              can_implement_avx2, nullptr, run_avx2};
extern const Kernel layer_norm_kernel = {Op::LayerNorm, "layer_norm", KernelPath::Reference, runs_every_node, nullptr,
                                         run};

}  // namespace octet::cpu
