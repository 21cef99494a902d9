// Activation on the CPU: each int8 value through the node's 256-entry table
// (graph/ops/activation.h). The table depends on the input and output scales,
// so it is made per run (256 values), not prepared: an engine for other
// scales shares what the kernels prepared (CpuEngine(model, packed)).
#include <array>

#include "graph/ops/activation.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const NodeView& v = a.node;
  const std::array<int8_t, 256> levels =
      ops::activation_table(v.node(), v.model.quant[v.node().inputs[0]].scale, v.quant().scale, v.input_zero_point(),
                            v.quant().zero_point);
  const int8_t* x = a.inputs[0];
  const int64_t count = a.batch * a.node.output().numel();
#pragma omp parallel for if (count >= kMinParallelWork)
  for (int64_t i = 0; i < count; ++i) a.y[i] = levels[static_cast<size_t>(x[i] + 128)];
}
}  // namespace

extern const Kernel activation_kernel = {Op::Activation, "activation-table", KernelPath::Reference, runs_every_node,
                                         nullptr, run};

}  // namespace octet::cpu
