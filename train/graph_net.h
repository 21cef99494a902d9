// A LibTorch module that executes a model graph (models/) for training: it
// owns the parameters each node's operator lists (graph/op.h) and runs every
// node by the trainer's kernel for its operator (train/torch_ops.h). State is
// exchanged with checkpoints under the graph's parameter names.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "common/tensor.h"
#include "graph/graph.h"
#include "train/torch_ops.h"

namespace octet {

class GraphNetImpl : public torch::nn::Module {
 public:
  explicit GraphNetImpl(Graph graph);
  torch::Tensor forward(const torch::Tensor& x);  // a model of one output's
  std::vector<torch::Tensor> forward_outputs(const torch::Tensor& x);  // every output's, in order

  const Graph& graph() const { return graph_; }
  // Parameters and buffers under their graph names, in graph order.
  const std::vector<std::pair<std::string, torch::Tensor>>& named_state() const { return state_; }
  std::map<std::string, FloatTensor> export_state() const;
  void import_state(const std::map<std::string, FloatTensor>& params);

 private:
  torch::Tensor add_state(const std::string& name, torch::Tensor value, bool trainable);

  Graph graph_;
  std::vector<TorchParams> node_params_;
  std::vector<const TorchOp*> ops_;  // per node
  std::vector<std::pair<std::string, torch::Tensor>> state_;
  std::vector<int> last_use_;  // index of the last node reading each value
};

TORCH_MODULE(GraphNet);

}  // namespace octet
