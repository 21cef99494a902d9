// Input on the CPU: the float NCHW image batch to int8 NHWC, each value by
// common/requantize.h's quantize_input.
#include "common/requantize.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape s = a.node.output();
  const float scale = a.node.quant().scale;
  const int64_t plane = int64_t(s.h) * s.w;
#pragma omp parallel for if (a.batch * plane * s.c >= kMinParallelWork)
  for (int64_t n = 0; n < a.batch; ++n)
    for (int ch = 0; ch < s.c; ++ch) {  // reads each plane in order, so the loop vectorises
      const float* src = a.image + (n * s.c + ch) * plane;
      int8_t* dst = a.y + n * plane * s.c + ch;
      for (int64_t p = 0; p < plane; ++p) dst[p * s.c] = quantize_input(src[p], scale);
    }
}
}  // namespace

extern const Kernel input_kernel = {Op::Input, "input", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
