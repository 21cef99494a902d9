// Input on the CPU: the float NCHW image batch to int8 NHWC, each value by
// common/requantize.h's quantize_input. Threads share the image rows; each
// channel's row is rounded into a small buffer, with AVX2 on the AVX2 and
// AVX-512 paths (input_avx2.h: the compiler does not vectorise
// quantize_input's NaN and clamp branches), and then interleaved into the
// pixels.
#include <vector>

#include "common/error.h"
#include "common/requantize.h"
#include "runtime/cpu/input_avx2.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
using QuantizeRun = void (*)(const float* src, int64_t n, float scale, int8_t* dst);

void quantize_run(const float* src, int64_t n, float scale, int8_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = quantize_input(src[i], scale);
}

void run_with(const KernelArgs& a, QuantizeRun quantize) {
  const ActShape s = a.node.output();
  const float scale = a.node.quant().scale;
  const int64_t rows = a.batch * s.h;
  // Row r, rounded through `rounded` (the thread's).
  const auto row = [&](int64_t r, std::vector<int8_t>& rounded) {
    const int64_t n = r / s.h, y = r % s.h;
    int8_t* dst = a.y + r * s.w * s.c;
    for (int ch = 0; ch < s.c; ++ch) {
      quantize(a.image + ((n * s.c + ch) * s.h + y) * s.w, s.w, scale, rounded.data());
      for (int64_t x = 0; x < s.w; ++x) dst[x * s.c + ch] = rounded[x];
    }
  };
  parallel_for(rows, rows * s.w * s.c >= kMinParallelWork,
               [&] { return std::vector<int8_t>(static_cast<size_t>(s.w)); }, row);
}

void run(const KernelArgs& a) { run_with(a, quantize_run); }

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  run_with(a, avx2::quantize_run);
#else
  fail("input-avx2: this build has no AVX2 kernels");
#endif
}
}  // namespace

// An AVX-512 CPU has AVX2: its path runs the AVX2 rounding too.
extern const Kernel input_avx2_kernel = {Op::Input, "input-avx2", KernelPath::Avx2,
                                         runs_every_node_on_avx2, nullptr, run_avx2};
extern const Kernel input_vnni_kernel = {Op::Input, "input-avx2", KernelPath::Avx512Vnni,
                                         runs_every_node_on_vnni, nullptr, run_avx2};
extern const Kernel input_kernel = {Op::Input, "input", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
