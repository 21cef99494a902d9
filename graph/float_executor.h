// Runs an inference graph (fold.h) in float32 on the CPU, without LibTorch.
// Calibration records activations through the observer, and `octet eval`
// takes the float reference from it.
//
// Activations are NHWC ([N][H][W][C]); a flattened vector keeps the HWC order,
// and the linear layer after a flatten has its weight columns permuted to match.
#pragma once

#include <functional>
#include <vector>

#include "graph/fold.h"
#include "graph/op.h"

namespace octet {

class FloatExecutor {
 public:
  // Called with every node's output.
  using Observer = std::function<void(int node, const FloatTensor& activation)>;

  explicit FloatExecutor(const FloatModel& model);

  // `input` is N x C x H x W normalised images; returns the logits (logits_shape): the last output's.
  FloatTensor run(const float* input, int64_t batch, const Observer& observer = {}) const;
  // Every output's, in order (Graph::outputs).
  std::vector<FloatTensor> run_outputs(const float* input, int64_t batch, const Observer& observer = {}) const;

  // Computes node i from the values of the nodes it reads (does not store it).
  // `storage`, when it has the output's size, becomes the output (its contents
  // are overwritten): a freed activation reused without a fresh, zeroed one.
  FloatTensor run_node(int i, const std::vector<FloatTensor>& values, std::vector<float> storage = {}) const;

  const Graph& graph() const { return graph_; }
  const std::vector<ActShape>& shapes() const { return shapes_; }

 private:
  // Runs nodes [first, end) given the values of all earlier nodes they read;
  // `values` holds one tensor per node and is updated in place. Each value
  // that no node at or after `end` reads (the output excepted) is released
  // once its last reader has run, so memory holds only the live tensors.
  void run_nodes(std::vector<FloatTensor>& values, int first, int end, const Observer& observer) const;

  Graph graph_;
  std::vector<ActShape> shapes_;
  std::vector<FloatLayer> layers_;  // per node; weighted ones only
  std::vector<int> last_reader_;  // per node: the last node reading it (an output: past the end)
};

}  // namespace octet
