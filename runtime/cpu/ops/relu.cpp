// ReLU on the CPU (one not fused into the op before it): max(x, 0), same scale.
#include <algorithm>

#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const int64_t count = a.batch * a.node.output().numel();
  const auto zero = static_cast<int8_t>(a.node.input_zero_point());  // a real 0
  for (int64_t i = 0; i < count; ++i) a.y[i] = std::max(a.inputs[0][i], zero);
}
}  // namespace

extern const Kernel relu_kernel = {Op::ReLU, "relu", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
