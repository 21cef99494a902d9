// Add on the CPU: both int8 inputs rescaled to the output's scale in one
// requantize (one multiplier each, one shift), with a fused ReLU; with
// AVX-512 or AVX2 (add_simd.h) where the CPU has it (an add no conv absorbs,
// after a GroupNorm: 3 ms of ResNet-50-GN's 40 one value at a time on
// AVX-512, 27 of 116 ms on AVX2).
#include <vector>

#include "common/error.h"
#include "common/requantize.h"
#include "runtime/cpu/add_simd.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const NodeQuant& q = a.node.quant();
  const int32_t multiplier_a = q.multiplier.data[0], multiplier_b = q.multiplier.data[1], shift = q.shift.data[0];
  const int32_t lo = lowest_output(a.node.node().relu, q.zero_point);
  const int32_t x_zero = a.node.input_zero_point(0), z_zero = a.node.input_zero_point(1);
  const int8_t *x = a.inputs[0], *z = a.inputs[1];
  const int64_t count = a.batch * a.node.output().numel();
  parallel_for(count, count >= kMinParallelWork, [&](int64_t i) {
    a.y[i] = static_cast<int8_t>(
        requantize(x[i] - x_zero, multiplier_a, z[i] - z_zero, multiplier_b, shift, lo, q.zero_point));
  });
}

// The requantization as the conv epilogue's, 16 channels alike: the first input the accumulator, the second the
// residual (made once per engine: Kernel::bind).
struct BoundAdd : KernelData {
  std::vector<int32_t> zeros = std::vector<int32_t>(kEpilogueBlock, 0), multiplier, skip_multiplier, shift;
  std::unique_ptr<PaddedEpilogue> epilogue;
};

template <KernelPath Path>
std::unique_ptr<KernelData> bind_simd(const NodeView& v, const KernelData*) {
  auto bound = std::make_unique<BoundAdd>();
  const NodeQuant& q = v.quant();
  bound->multiplier.assign(kEpilogueBlock, q.multiplier.data[0]);
  bound->skip_multiplier.assign(kEpilogueBlock, q.multiplier.data[1]);
  bound->shift.assign(kEpilogueBlock, q.shift.data[0]);
  RequantEpilogue requant;
  requant.bias = bound->zeros.data(), requant.multiplier = bound->multiplier.data();
  requant.shift = bound->shift.data(), requant.skip_multiplier = bound->skip_multiplier.data();
  requant.relu = v.node().relu, requant.zero_point = q.zero_point, requant.skip_zero_point = v.input_zero_point(1);
  bound->epilogue = std::make_unique<PaddedEpilogue>(kEpilogueBlock, bound->zeros.data(), &requant,
                                                     v.input_zero_point(0), 8);
  if (Path == KernelPath::Avx512Vnni) bound->epilogue->add_vnni_vectors(1);
  return bound;
}

void run_vnni(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  vnni::add(a.inputs[0], a.inputs[1], a.batch * a.node.output().numel(), a.node.input_zero_point(0),
            static_cast<const BoundAdd*>(a.bound)->epilogue->tables, a.y);
#else
  fail("add-avx512: this build has no AVX-512 kernels");
#endif
}

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  avx2::add(a.inputs[0], a.inputs[1], a.batch * a.node.output().numel(), a.node.input_zero_point(0),
            static_cast<const BoundAdd*>(a.bound)->epilogue->tables, a.y);
#else
  fail("add-avx2: this build has no AVX2 kernels");
#endif
}
}  // namespace

extern const Kernel add_vnni_kernel = {Op::Add,  "add-avx512", KernelPath::Avx512Vnni, runs_every_node_on_vnni,
                                       nullptr, run_vnni,     bind_simd<KernelPath::Avx512Vnni>};
extern const Kernel add_avx2_kernel = {Op::Add, "add-avx2", KernelPath::Avx2, runs_every_node_on_avx2,
                                       nullptr, run_avx2,   bind_simd<KernelPath::Avx2>};
extern const Kernel add_kernel = {Op::Add, "add", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
