// Add on the CPU: both int8 inputs rescaled to the output's scale in one
// requantize (one multiplier each, one shift), with a fused ReLU.
#include "common/requantize.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const NodeQuant& q = a.node.quant();
  const int32_t multiplier_a = q.multiplier.data[0], multiplier_b = q.multiplier.data[1], shift = q.shift.data[0];
  const int32_t lo = a.node.node().relu ? 0 : -128;
  const int8_t *x = a.inputs[0], *z = a.inputs[1];
  const int64_t count = a.batch * a.node.output().numel();
#pragma omp parallel for if (count >= kMinParallelWork)
  for (int64_t i = 0; i < count; ++i)
    a.y[i] = static_cast<int8_t>(requantize(x[i], multiplier_a, z[i], multiplier_b, shift, lo));
}
}  // namespace

extern const Kernel add_kernel = {Op::Add, "add", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
