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

namespace octet {

class FloatExecutor {
 public:
  // Called with every node's output.
  using Observer = std::function<void(int node, const FloatTensor& activation)>;

  explicit FloatExecutor(const FloatModel& model);

  // `input` is N x C x H x W normalised images; returns the logits [N][classes].
  FloatTensor run(const float* input, int64_t batch, const Observer& observer = {}) const;

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

  struct Layer {
    FloatTensor weight;  // [out][K], K in the order the NHWC input is read
    std::vector<float> bias;
  };
  Graph graph_;
  std::vector<ActShape> shapes_;
  std::vector<Layer> layers_;
  std::vector<int> last_reader_;  // per node: the last node reading it (the output: past the end)
};

// Rows [first, first + count) of the im2col matrix of a conv reading NHWC
// `x`: each row is one output pixel's receptive field in (ky, kx, c) order,
// zero outside the image. For a linear layer the rows are the input vectors.
void gather_patches(const Node& n, const ActShape& in, const ActShape& out, const float* x, int64_t first,
                    int64_t count, float* rows);
inline int64_t patch_size(const Node& n, const ActShape& in) {
  return n.op == Op::Conv2d ? int64_t(n.kernel) * n.kernel * in.c : in.numel();
}
inline int64_t patch_rows(const Node& n, const ActShape& out, int64_t batch) {
  return n.op == Op::Conv2d ? batch * out.h * out.w : batch;
}

// NCHW -> NHWC float conversion of a batch of images.
FloatTensor to_nhwc(const float* nchw, int64_t batch, const ActShape& shape);

}  // namespace octet
