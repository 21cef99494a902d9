// Activation on the CPU: each int8 value through the node's 256-entry table
// (graph/ops/activation.h), made once when the model is loaded.
#include <array>

#include "graph/ops/activation.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
struct Table : KernelData {
  std::array<int8_t, 256> levels;
};

std::unique_ptr<KernelData> prepare(const NodeView& v) {
  auto t = std::make_unique<Table>();
  t->levels = ops::activation_table(v.node(), v.model.quant[v.node().inputs[0]].scale, v.quant().scale);
  return t;
}

void run(const KernelArgs& a) {
  const std::array<int8_t, 256>& levels = static_cast<const Table*>(a.data)->levels;
  const int8_t* x = a.inputs[0];
  const int64_t count = a.batch * a.node.output().numel();
#pragma omp parallel for if (count >= kMinParallelWork)
  for (int64_t i = 0; i < count; ++i) a.y[i] = levels[static_cast<size_t>(x[i] + 128)];
}
}  // namespace

extern const Kernel activation_kernel = {Op::Activation, "activation-table", KernelPath::Reference, runs_every_node,
                                         prepare, run};

}  // namespace octet::cpu
