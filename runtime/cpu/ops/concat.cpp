// Concat on the CPU: each input's channels requantized to the output's scale
// (a multiplier per input, one shift) into their place in each NHWC pixel.
#include "common/requantize.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const NodeQuant& q = a.node.quant();
  const ActShape out = a.node.output();
  const int64_t pixels = a.batch * out.h * out.w;
  int first = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const int channels = a.node.input(i).c;
    const int32_t multiplier = q.multiplier.data[i], shift = q.shift.data[0], zero_in = a.node.input_zero_point(i);
    const int8_t* x = a.inputs[i];
#pragma omp parallel for if (pixels * channels >= kMinParallelWork)
    for (int64_t p = 0; p < pixels; ++p)
      for (int c = 0; c < channels; ++c)
        a.y[p * out.c + first + c] =
            static_cast<int8_t>(requantize(x[p * channels + c] - zero_in, multiplier, 0, 0, shift, -128, q.zero_point));
    first += channels;
  }
}
}  // namespace

extern const Kernel concat_kernel = {Op::Concat, "concat", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
