#include "train/graph_net.h"

#include <cmath>

#include "common/error.h"
#include "train/torch_ops.h"

namespace octet {

namespace {
std::string torch_safe(std::string name) {  // torch refuses '.' in registered names
  for (char& ch : name)
    if (ch == '.') ch = '_';
  return name;
}
}  // namespace

GraphNetImpl::GraphNetImpl(Graph graph) : graph_(std::move(graph)) {
  graph_.validate();
  const std::vector<ActShape> shapes = graph_.shapes();
  node_params_.resize(graph_.nodes.size());
  ops_.resize(graph_.nodes.size());
  last_use_ = graph_.last_readers();
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    ops_[i] = torch_op(n.op);
    check(ops_[i] != nullptr, "cannot train node '" + n.name + "': the trainer has no kernel for operator '" +
                                  op_name(n.op) + "' (train/torch_ops.cpp)");
    const OpDef& def = op_def(n.op);
    if (!def.params) continue;
    const std::vector<ActShape> in = input_shapes(n, shapes);
    TorchParams& t = node_params_[i];
    for (const ParamShape& p : def.params(n, in)) {
      const std::string suffix = p.suffix;
      torch::Tensor& slot = suffix == ".weight"         ? t.weight
                            : suffix == ".bias"         ? t.bias
                            : suffix == ".running_mean" ? t.running_mean
                                                        : t.running_var;
      slot = add_state(n.name + suffix, ops_[i]->init(n, in, p), p.trainable);
    }
  }
}

torch::Tensor GraphNetImpl::add_state(const std::string& name, torch::Tensor value, bool trainable) {
  torch::Tensor registered =
      trainable ? register_parameter(torch_safe(name), value) : register_buffer(torch_safe(name), value);
  state_.emplace_back(name, registered);
  return registered;
}

torch::Tensor GraphNetImpl::forward(const torch::Tensor& input) {
  check(graph_.output_count == 1, "the trainer trains models of one output, and this one has " +
                                      std::to_string(graph_.output_count) + " (from '" +
                                      graph_.nodes[graph_.first_output()].name + "')");
  return forward_outputs(input).back();
}

std::vector<torch::Tensor> GraphNetImpl::forward_outputs(const torch::Tensor& input) {
  std::vector<torch::Tensor> values(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    std::vector<torch::Tensor> inputs;
    for (int in : n.inputs) inputs.push_back(values[in]);
    if (n.inputs.empty()) inputs.push_back(input);
    torch::Tensor y = ops_[i]->forward(n, inputs, node_params_[i], is_training());
    if (n.relu) y = n.relu_max > 0 ? torch::clamp(y, 0, n.relu_max) : torch::relu(y);  // a fused Clip(0, max): ReLU6
    values[i] = y;
    for (int in : n.inputs)  // drop values no later node reads
      if (last_use_[in] == static_cast<int>(i)) values[in] = torch::Tensor();
  }
  return {values.begin() + graph_.first_output(), values.end()};
}

std::map<std::string, FloatTensor> GraphNetImpl::export_state() const {
  std::map<std::string, FloatTensor> out;
  for (const auto& [name, tensor] : state_) {
    const torch::Tensor cpu = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    FloatTensor t;
    t.shape.assign(cpu.sizes().begin(), cpu.sizes().end());
    t.data.assign(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
    out[name] = std::move(t);
  }
  return out;
}

void GraphNetImpl::import_state(const std::map<std::string, FloatTensor>& params) {
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : state_) {
    auto it = params.find(name);
    check(it != params.end(), "checkpoint has no parameter '" + name + "'");
    const FloatTensor& src = it->second;
    check(std::vector<int64_t>(tensor.sizes().begin(), tensor.sizes().end()) == src.shape,
          "parameter '" + name + "' has shape " + shape_string(src.shape) + " in the checkpoint");
    tensor.copy_(torch::from_blob(const_cast<float*>(src.data.data()), tensor.sizes(), torch::kFloat32));
  }
}

}  // namespace octet
