// Runs an inference graph (fold.h) in float32 on the CPU, without LibTorch.
// Calibration records activations through the observer, fake quantization
// rewrites them in place, and `octet eval` takes the float reference from it.
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
  // Called with every node's output, which it may modify (fake quantization).
  using Observer = std::function<void(int node, FloatTensor& activation)>;

  explicit FloatExecutor(const FloatModel& model);

  // `input` is N x C x H x W normalised images; returns the logits [N][classes].
  FloatTensor run(const float* input, int64_t batch, const Observer& observer = {}) const;
  // Runs nodes [first, end) given the values of all earlier nodes they read;
  // `values` holds one tensor per node and is updated in place.
  void run_nodes(std::vector<FloatTensor>& values, int first, const Observer& observer = {}) const;

  const Graph& graph() const { return graph_; }
  const std::vector<ActShape>& shapes() const { return shapes_; }

 private:
  struct Layer {
    FloatTensor weight;  // [out][K], K in the order the NHWC input is read
    std::vector<float> bias;
  };
  FloatTensor run_node(int i, const std::vector<FloatTensor>& values) const;

  Graph graph_;
  std::vector<ActShape> shapes_;
  std::vector<Layer> layers_;
};

// NCHW -> NHWC float conversion of a batch of images.
FloatTensor to_nhwc(const float* nchw, int64_t batch, const ActShape& shape);

// Weight layouts shared with the quantizer: conv OIHW -> [O][kh][kw][I];
// linear after a flatten of C x H x W -> columns in H, W, C order.
FloatTensor conv_weight_ohwi(const FloatTensor& oihw);
FloatTensor linear_weight_hwc(const FloatTensor& weight, const ActShape& flattened_from);

}  // namespace octet
