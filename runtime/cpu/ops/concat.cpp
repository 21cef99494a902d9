// Concat on the CPU: each input's channels requantized to the output's scale
// (a multiplier per input, one shift) into their place in each NHWC pixel.
// An input value's output depends on that byte alone, so each input's 256
// results are computed once and looked up (copied where they are the bytes
// themselves: an input already at the output's scale and zero point): by
// AVX-512 VBMI 64 bytes at a time where the CPU has it (lookup_simd.h; the
// AVX-512 VNNI path), by AVX2 32 at a time, else one byte at a time.
#include <array>
#include <cstring>

#include "common/error.h"
#include "common/requantize.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"
#include "runtime/cpu/lookup_simd.h"

namespace octet::cpu {

namespace {
// Pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 64;

void lookup_rows(const int8_t* src, int64_t pixels, int64_t channels, const int8_t* table, int8_t* dst,
                 int64_t dst_stride) {
  for (int64_t p = 0; p < pixels; ++p, src += channels, dst += dst_stride)
    for (int64_t c = 0; c < channels; ++c) dst[c] = table[src[c] + 128];
}

void copy_rows(const int8_t* src, int64_t pixels, int64_t channels, const int8_t*, int8_t* dst, int64_t dst_stride) {
  for (int64_t p = 0; p < pixels; ++p, src += channels, dst += dst_stride)
    std::memcpy(dst, src, static_cast<size_t>(channels));
}

void run_with(const KernelArgs& a, LookupRows lookup, int64_t min_parallel) {
  const NodeQuant& q = a.node.quant();
  const ActShape out = a.node.output();
  const int64_t pixels = a.batch * out.h * out.w;
  int first = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const int channels = a.node.input(i).c;
    const int32_t multiplier = q.multiplier.data[i], shift = q.shift.data[0], zero_in = a.node.input_zero_point(i);
    std::array<int8_t, 256> table;
    bool identity = true;
    for (int v = -128; v < 128; ++v) {
      table[v + 128] = static_cast<int8_t>(requantize(v - zero_in, multiplier, 0, 0, shift, -128, q.zero_point));
      identity = identity && table[v + 128] == v;
    }
    const LookupRows rows = identity ? copy_rows : lookup;
    const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
    parallel_for(tasks, pixels * channels >= min_parallel, [&](int64_t t) {
      const int64_t p = t * kPixelsPerTask, count = pixels - p < kPixelsPerTask ? pixels - p : kPixelsPerTask;
      rows(a.inputs[i] + p * channels, count, channels, table.data(), a.y + p * out.c + first, out.c);
    });
    first += channels;
  }
}

void run(const KernelArgs& a) { run_with(a, lookup_rows, kMinParallelWork); }

void run_vbmi(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  run_with(a, vbmi::lookup_rows, int64_t{1} << 20);  // as activations: waking a thread costs more below
#else
  fail("concat-avx512-vbmi: this build has no AVX-512 kernels");
#endif
}

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  run_with(a, avx2::lookup_rows, kMinParallelWork);
#else
  fail("concat-avx2: this build has no AVX2 kernels");
#endif
}
}  // namespace

extern const Kernel concat_vbmi_kernel = {Op::Concat, "concat-avx512-vbmi", KernelPath::Avx512Vnni,
                                          runs_every_node_with_vbmi, nullptr,
                                          run_vbmi};
extern const Kernel concat_avx2_kernel = {Op::Concat, "concat-avx2", KernelPath::Avx2, runs_every_node_on_avx2,
                                          nullptr, run_avx2};
extern const Kernel concat_kernel = {Op::Concat, "concat", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
