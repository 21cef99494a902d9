// Add on the CPU: both int8 inputs rescaled to the output's scale in one
// requantize (one multiplier each, one shift), with a fused ReLU.
#include "common/requantize.h"
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
}  // namespace

extern const Kernel add_kernel = {Op::Add, "add", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
