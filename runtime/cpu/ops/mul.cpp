// Mul on the CPU: the product of the two int8 inputs (the second per channel
// or of the same shape) requantized by one multiplier.
#include "common/requantize.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const NodeQuant& q = a.node.quant();
  const int32_t multiplier = q.multiplier.data[0], shift = q.shift.data[0];
  const int32_t x_zero = a.node.input_zero_point(0), z_zero = a.node.input_zero_point(1);
  const ActShape out = a.node.output();
  const bool broadcast = !(a.node.input(1) == out);
  const int64_t channels = out.c, per_sample = out.numel(), count = a.batch * per_sample;
  const int8_t *x = a.inputs[0], *z = a.inputs[1];
#pragma omp parallel for if (count >= kMinParallelWork)
  for (int64_t i = 0; i < count; ++i) {
    const int32_t gate = z[broadcast ? i / per_sample * channels + i % channels : i] - z_zero;
    a.y[i] = static_cast<int8_t>(requantize((x[i] - x_zero) * gate, multiplier, 0, 0, shift, -128, q.zero_point));
  }
}
}  // namespace

extern const Kernel mul_kernel = {Op::Mul, "mul", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
