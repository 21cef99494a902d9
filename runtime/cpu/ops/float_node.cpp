// Any node a quantized model keeps in float (NodeQuant::in_float), on the
// CPU: graph/float_node.h's run_dequantized, which the test oracle runs too.
// Values inside a float segment (QuantizedModel::float_outputs) are floats in
// the engine's buffers, which it sizes for them.
#include "graph/float_node.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
struct FloatNode : KernelData {
  FloatLayer layer;              // weighted nodes
  std::vector<bool> float_input;  // per input: a float segment's value
  bool float_output = false;
};

std::string runs_float_nodes(const NodeView& v) {
  return v.quant().in_float ? "" : "the node runs in int8";
}

std::unique_ptr<KernelData> prepare(const NodeView& v) {
  auto data = std::make_unique<FloatNode>();
  data->layer = float_layer(v.model.graph, v.shapes, v.index, v.quant());
  const std::vector<bool> float_outputs = v.model.float_outputs();
  for (int in : v.node().inputs) data->float_input.push_back(float_outputs[in]);
  data->float_output = float_outputs[v.index];
  return data;
}

void run(const KernelArgs& a) {
  const NodeView& v = a.node;
  const FloatNode& data = *static_cast<const FloatNode*>(a.data);
  DequantizedRun r{v.model.graph, v.shapes, v.index, v.quant(), &data.layer, a.batch, {}, {}, {}, a.y};
  for (size_t k = 0; k < a.inputs.size(); ++k) {
    const bool is_float = data.float_input[k];
    r.inputs.push_back(is_float ? nullptr : a.inputs[k]);
    r.float_inputs.push_back(is_float ? reinterpret_cast<const float*>(a.inputs[k]) : nullptr);
    r.input_scales.push_back(v.model.quant[v.node().inputs[k]].scale);
    r.input_zero_points.push_back(v.model.quant[v.node().inputs[k]].zero_point);
  }
  if (data.float_output) {
    r.y = nullptr;
    r.float_y = reinterpret_cast<float*>(a.y);
  }
  run_dequantized(r);
}
}  // namespace

// Not in kernel_table(): the engine gives a float node this kernel, whatever its operator.
extern const Kernel float_node_kernel = {Op::Input, "float", KernelPath::Reference, runs_float_nodes, prepare, run};

}  // namespace octet::cpu
