// Any node a quantized model keeps in float (NodeQuant::in_float), on the
// CPU: graph/float_node.h's run_dequantized, which the test oracle runs too.
#include "graph/float_node.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
struct Layer : KernelData {
  FloatLayer layer;
};

std::string runs_float_nodes(const NodeView& v) {
  return v.quant().in_float ? "" : "the node runs in int8";
}

std::unique_ptr<KernelData> prepare(const NodeView& v) {
  if (!op_traits(v.node().op).weighted) return nullptr;
  auto data = std::make_unique<Layer>();
  data->layer = float_layer(v.model.graph, v.shapes, v.index, v.quant());
  return data;
}

void run(const KernelArgs& a) {
  const NodeView& v = a.node;
  DequantizedRun r{v.model.graph, v.shapes, v.index, v.quant(), nullptr, a.batch, a.inputs, {}, a.y};
  if (a.data) r.layer = &static_cast<const Layer*>(a.data)->layer;
  for (int in : v.node().inputs) r.input_scales.push_back(v.model.quant[in].scale);
  run_dequantized(r);
}
}  // namespace

// Not in kernel_table(): the engine gives a float node this kernel, whatever its operator.
extern const Kernel float_node_kernel = {Op::Input, "float", KernelPath::Reference, runs_float_nodes, prepare, run};

}  // namespace octet::cpu
