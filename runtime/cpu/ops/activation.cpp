// Activation on the CPU: each int8 value through the node's 256-entry table
// (graph/ops/activation.h): by AVX-512 VBMI 64 values at a time where the CPU
// has it (lookup_simd.h; the AVX-512 VNNI path), by AVX2 32 at a time, else
// one at a time. The
// table depends on the input and output scales, so it is made once per engine
// (bind), not prepared: an engine for other scales shares what the kernels
// prepared (CpuEngine(model, packed)). Made per run (256 values of erf,
// exp or tanh each), they took 14% of EfficientNet-B0's time at batch 1 and
// 28% of the zoo ConvNeXt's.
#include <algorithm>
#include <array>

#include "common/error.h"
#include "graph/ops/activation.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"
#include "runtime/cpu/lookup_simd.h"

namespace octet::cpu {

namespace {
// Values per unit of work shared among threads.
constexpr int64_t kValuesPerTask = int64_t{1} << 14;
// Fewer values run on the calling thread: the VBMI lookup takes about as long
// for them as waking another thread does.
constexpr int64_t kMinParallelLookups = int64_t{1} << 20;

struct Levels : KernelData {
  std::array<int8_t, 256> levels;
};
std::unique_ptr<KernelData> bind_levels(const NodeView& v, const KernelData*) {
  auto bound = std::make_unique<Levels>();
  bound->levels = ops::activation_table(v.node(), v.model.quant[v.node().inputs[0]].scale, v.quant().scale,
                                        v.input_zero_point(), v.quant().zero_point);
  return bound;
}
const std::array<int8_t, 256>& levels_of(const KernelArgs& a) { return static_cast<const Levels*>(a.bound)->levels; }

// restrict-qualified: an int8 store may otherwise alias the table, the input and the output pointer, which
// were then read again for every value (EfficientNet-B0's SiLUs took 8.1 of its 21.7 ms at batch 1 on AVX2).
void lookup(const int8_t* __restrict x, int64_t n, const int8_t* __restrict levels, int8_t* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = levels[static_cast<uint8_t>(x[i] + 128)];
}

void run(const KernelArgs& a) {
  const std::array<int8_t, 256>& levels = levels_of(a);
  const int64_t count = a.batch * a.node.output().numel(), tasks = (count + kValuesPerTask - 1) / kValuesPerTask;
  parallel_for(tasks, count >= kMinParallelWork, [&](int64_t t) {
    const int64_t first = t * kValuesPerTask;
    lookup(a.inputs[0] + first, std::min(kValuesPerTask, count - first), levels.data(), a.y + first);
  });
}

void run_simd(const KernelArgs& a, LookupRows lookup_rows) {
  const std::array<int8_t, 256>& levels = levels_of(a);
  const int64_t count = a.batch * a.node.output().numel(), tasks = (count + kValuesPerTask - 1) / kValuesPerTask;
  parallel_for(tasks, count >= kMinParallelLookups, [&](int64_t t) {
    const int64_t first = t * kValuesPerTask, n = count - first < kValuesPerTask ? count - first : kValuesPerTask;
    lookup_rows(a.inputs[0] + first, 1, n, levels.data(), a.y + first, n);
  });
}

void run_vbmi(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  run_simd(a, vbmi::lookup_rows);
#else
  fail("activation-avx512-vbmi: this build has no AVX-512 kernels");
#endif
}

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  run_simd(a, avx2::lookup_rows);
#else
  fail("activation-avx2: this build has no AVX2 kernels");
#endif
}
}  // namespace

extern const Kernel activation_vbmi_kernel = {Op::Activation, "activation-avx512-vbmi", KernelPath::Avx512Vnni,
                                              runs_every_node_with_vbmi, nullptr, run_vbmi, bind_levels};
extern const Kernel activation_avx2_kernel = {Op::Activation, "activation-avx2", KernelPath::Avx2,
                                              runs_every_node_on_avx2, nullptr, run_avx2, bind_levels};
extern const Kernel activation_kernel = {Op::Activation, "activation-table", KernelPath::Reference, runs_every_node,
                                         nullptr, run, bind_levels};

}  // namespace octet::cpu
