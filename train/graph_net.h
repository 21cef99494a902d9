// A LibTorch module that executes a model graph (models/) for training: it
// owns one parameter set per conv, linear and batch-norm node and runs the ops
// with torch functionals. State is exchanged with checkpoints under the graph's
// parameter names.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "common/tensor.h"
#include "graph/graph.h"

namespace octet {

class GraphNetImpl : public torch::nn::Module {
 public:
  explicit GraphNetImpl(Graph graph);
  torch::Tensor forward(const torch::Tensor& x);

  const Graph& graph() const { return graph_; }
  // Parameters and buffers under their graph names, in graph order.
  const std::vector<std::pair<std::string, torch::Tensor>>& named_state() const { return state_; }
  std::map<std::string, FloatTensor> export_state() const;
  void import_state(const std::map<std::string, FloatTensor>& params);

 private:
  struct NodeTensors {
    torch::Tensor weight, bias, running_mean, running_var;
  };
  torch::Tensor add_state(const std::string& name, torch::Tensor value, bool trainable);

  Graph graph_;
  std::vector<NodeTensors> node_tensors_;
  std::vector<std::pair<std::string, torch::Tensor>> state_;
  std::vector<int> last_use_;  // index of the last node reading each value
};

TORCH_MODULE(GraphNet);

}  // namespace octet
