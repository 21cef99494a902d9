// How a model's outputs read its output nodes. A detection head's exported
// outputs rearrange its convs' values without computing: RetinaNet's, SSD's
// and FCOS's view each level's A x K channels as (N, A, K, H, W), permute them
// to (N, H, W, A, K), flatten to rows of K and concatenate the levels' rows;
// YOLO's keep (N, A, H, W, K), and YOLOv5's inference outputs decode them to
// boxes and scores (YoloDecode). octet's outputs stay those convs (their int32
// accumulators are the logits, each at its own scale), and each carries its
// part of such an arrangement, applied where values leave octet (octet
// predict, the Python module, the ONNX export), in float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

class Graph;
struct ActShape;

// YOLOv5's decode of a level's values (models/yolo.py, Detect in inference mode), value k of anchor a at (h, w):
// s = sigmoid(v); k 0 and 1: (2 s - 0.5 + w, or h) x stride, the box's centre in pixels; k 2 and 3:
// (2 s)^2 x the anchor's width, or height, in pixels; the others s (objectness and classes).
struct YoloDecode {
  float stride = 0;            // 0: no decode
  std::vector<float> anchors;  // per anchor: width, height
  bool operator==(const YoloDecode& o) const { return stride == o.stride && anchors == o.anchors; }
};

// An output node's part in a model output. No name and no order: the node is a
// model output of its own, its values as they are (C x H x W, or C).
struct OutputView {
  std::string name;      // the model output: consecutive output nodes of one name are concatenated (axis 1)
  int groups = 1;        // the node's C channels read as groups x C / groups ("a" and "k" below)
  std::string order;     // the axes a, k, h, w of a sample, in the order the output has them ("hwak")
  int merged = 1;        // how many leading axes (in that order) are one: rows of K from "hwak" merge 3
  YoloDecode decode;     // applied to the float values before they are arranged
  bool operator==(const OutputView& o) const {
    return name == o.name && groups == o.groups && order == o.order && merged == o.merged && decode == o.decode;
  }
};

// A model output: its name (empty: the node's own), its output nodes and one
// sample's dimensions.
struct ModelOutput {
  std::string name;
  std::vector<int> nodes;
  std::vector<int64_t> dims;
};

// The model outputs of a graph, in order; fails naming a node whose view is
// malformed, or parts of one output whose trailing dimensions differ.
std::vector<ModelOutput> model_outputs(const Graph& g, const std::vector<ActShape>& shapes);
// One sample's dimensions of an output node's part of its model output: its view's axes, the leading ones merged
// (C x H x W, or C, without an order); fails where the view does not fit the node's shape.
std::vector<int64_t> output_part_dims(const OutputView& view, const ActShape& shape);
// Whether any output node is read through a view (a model of such outputs has
// no classes to predict).
bool has_output_views(const Graph& g);

// Where each value of one sample of `out` comes from, in the output's order: which of the graph's output nodes (its
// position among Graph::outputs) and where among that node's NHWC values of the sample.
struct OutputSource {
  int output;
  int64_t at;
};
std::vector<OutputSource> output_sources(const Graph& g, const std::vector<ActShape>& shapes, const ModelOutput& out);

// A batch of `out` from `node_values[k]`, `batch` samples of the graph's k-th output node (NHWC), as the engines'
// run_outputs return them.
template <typename T>
std::vector<T> arrange_output(const std::vector<OutputSource>& sources, const std::vector<std::vector<T>>& node_values,
                              int64_t batch) {
  std::vector<int64_t> per_sample(node_values.size());
  for (size_t k = 0; k < node_values.size(); ++k) per_sample[k] = static_cast<int64_t>(node_values[k].size()) / batch;
  std::vector<T> y(static_cast<size_t>(batch) * sources.size());
  for (int64_t n = 0; n < batch; ++n) {
    T* row = y.data() + n * static_cast<int64_t>(sources.size());
    for (size_t v = 0; v < sources.size(); ++v) {
      const OutputSource& s = sources[v];
      row[v] = node_values[static_cast<size_t>(s.output)][static_cast<size_t>(n * per_sample[s.output] + s.at)];
    }
  }
  return y;
}

}  // namespace octet
