#include "train/graph_net.h"

#include <cmath>

#include "common/error.h"

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
  node_tensors_.resize(graph_.nodes.size());
  last_use_ = graph_.last_readers();
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    const int in_c = n.inputs.empty() ? 0 : shapes[n.inputs[0]].c;
    NodeTensors& t = node_tensors_[i];
    if (n.op == Op::Conv2d || n.op == Op::Linear) {
      const bool conv = n.op == Op::Conv2d;
      const int64_t fan_in = static_cast<int64_t>(in_c) * (conv ? n.kernel * n.kernel : 1);
      torch::Tensor w = conv ? torch::empty({n.channels, in_c, n.kernel, n.kernel}) : torch::empty({n.channels, in_c});
      // Convs: He et al.'s normal init (as the CIFAR ResNet code does); linears: torch's default.
      if (conv)
        torch::nn::init::kaiming_normal_(w, 0.0, torch::kFanIn, torch::kReLU);
      else
        torch::nn::init::kaiming_uniform_(w, std::sqrt(5.0));
      t.weight = add_state(n.name + ".weight", w, true);
      if (n.bias) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
        t.bias = add_state(n.name + ".bias", torch::empty({n.channels}).uniform_(-bound, bound), true);
      }
    } else if (n.op == Op::BatchNorm2d) {
      t.weight = add_state(n.name + ".weight", torch::ones({in_c}), true);
      t.bias = add_state(n.name + ".bias", torch::zeros({in_c}), true);
      t.running_mean = add_state(n.name + ".running_mean", torch::zeros({in_c}), false);
      t.running_var = add_state(n.name + ".running_var", torch::ones({in_c}), false);
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
  using torch::indexing::None;
  using torch::indexing::Slice;
  std::vector<torch::Tensor> values(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    const NodeTensors& t = node_tensors_[i];
    const torch::Tensor& x = n.inputs.empty() ? input : values[n.inputs[0]];
    torch::Tensor y;
    switch (n.op) {
      case Op::Input: y = input; break;
      case Op::Conv2d: y = torch::conv2d(x, t.weight, t.bias, n.stride, n.padding); break;
      case Op::BatchNorm2d:
        y = torch::batch_norm(x, t.weight, t.bias, t.running_mean, t.running_var, is_training(), 0.1, 1e-5,
                              /*cudnn_enabled=*/true);
        break;
      case Op::Linear: y = torch::linear(x, t.weight, t.bias); break;
      case Op::ReLU: y = torch::relu(x); break;
      case Op::MaxPool2d: y = torch::max_pool2d(x, n.kernel, n.stride); break;
      case Op::AvgPool2d: y = torch::avg_pool2d(x, n.kernel, n.stride); break;
      case Op::GlobalAvgPool: y = torch::adaptive_avg_pool2d(x, {1, 1}); break;
      case Op::Add: y = x + values[n.inputs[1]]; break;
      case Op::Flatten: y = x.flatten(1); break;
      case Op::ShortcutA:
        y = torch::constant_pad_nd(x.index({Slice(), Slice(), Slice(None, None, 2), Slice(None, None, 2)}),
                                   {0, 0, 0, 0, n.channels, n.channels}, 0);
        break;
    }
    if (n.relu) y = torch::relu(y);
    values[i] = y;
    for (int in : n.inputs)  // drop values no later node reads
      if (last_use_[in] == static_cast<int>(i)) values[in] = torch::Tensor();
  }
  return values.back();
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
