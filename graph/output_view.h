// How a model's outputs read its output nodes. A detection head's exported
// outputs rearrange its convs' values without computing: RetinaNet's, SSD's
// and FCOS's view each level's A x K channels as (N, A, K, H, W), permute them
// to (N, H, W, A, K), flatten to rows of K and concatenate the levels' rows;
// YOLO's keep (N, A, H, W, K), and YOLOv5's inference outputs decode them to
// boxes and scores (YoloDecode); YOLOv8's decode each level's box and class
// convs and place them in one (N, 4 + classes, positions) output. octet's
// outputs stay those convs (their int32 accumulators are the logits, each at
// its own scale), and each carries its part of such an arrangement, applied
// where values leave octet (octet predict, the Python module, the ONNX
// export), in float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

class Graph;
struct ActShape;

// How an output node's float values are decoded before they are arranged (graph/output_decode.h).
enum class DecodeKind {
  None,
  // YOLOv5's Detect (models/yolo.py in inference mode), value k of anchor a at (h, w): s = sigmoid(v); k 0 and 1:
  // (2 s - 0.5 + w, or h) x stride, the box's centre in pixels; k 2 and 3: (2 s)^2 x the anchor's width, or height,
  // in pixels; the others s (objectness and classes).
  Yolov5,
  // YOLOv8's (and YOLO11's) box conv, 4 x B channels: for each side, the expectation of a softmax over its B bins
  // (DFL), distances (l, t, r, b) from the cell's centre (w + 0.5, h + 0.5), as the box's centre and size, times
  // the stride: 4 values where there were 4 B.
  Yolov8Boxes,
  Sigmoid,  // YOLOv8's class conv: each value's sigmoid
  // YOLOv8's pose head's keypoint conv, K x 3 channels (x, y, visibility per keypoint): x and y as (2 v + w, or h)
  // x the stride, in pixels; the visibility's sigmoid.
  Yolov8Keypoints,
  // A model output that is a conv's SiLU (YOLOv8's and YOLOv5's mask prototypes): v sigmoid(v) of its accumulators,
  // in float, where an int8 SiLU would spend half its levels on its small negative range.
  Silu,
};

struct YoloDecode {
  DecodeKind kind = DecodeKind::None;
  float stride = 0;            // Yolov5, Yolov8Boxes, Yolov8Keypoints: the level's stride in pixels
  std::vector<float> anchors;  // Yolov5: per anchor: width, height
  bool operator==(const YoloDecode& o) const { return kind == o.kind && stride == o.stride && anchors == o.anchors; }
};

// An output node's part in a model output. No name and no order: the node is a
// model output of its own, its values as they are (C x H x W, or C).
struct OutputView {
  std::string name;      // the model output: consecutive output nodes of one name are concatenated (axis 1)
  int groups = 1;        // the node's C channels read as groups x C / groups ("a" and "k" below)
  std::string order;     // the axes a, k, h, w of a sample, in the order the output has them ("hwak")
  int merged = 1;        // how many leading axes (in that order) are one: rows of K from "hwak" merge 3
  YoloDecode decode;     // applied to the float values before they are arranged (k counts the decoded values)
  int merged_last = 1;   // how many trailing axes are one: YOLOv8's (K, H x W) from "akhw" merge 2 (and 2 leading)
  // Where the part starts in its model output, one index per dimension; empty: after the previous part of its
  // output along the first dimension (rows after rows). YOLOv8's level l: boxes at (0, P_l), classes at (4, P_l).
  std::vector<int64_t> at;
  bool operator==(const OutputView& o) const {
    return name == o.name && groups == o.groups && order == o.order && merged == o.merged && decode == o.decode &&
           merged_last == o.merged_last && at == o.at;
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
// One sample's dimensions of an output node's part of its model output: its view's axes (k counting the decoded
// values), the leading and trailing ones merged (C x H x W, or C, without an order); fails where the view does not
// fit the node's shape.
std::vector<int64_t> output_part_dims(const OutputView& view, const ActShape& shape);
// Whether any output node is read through a view (a model of such outputs has
// no classes to predict).
bool has_output_views(const Graph& g);

// Where one sample of `out` comes from, as runs of consecutive values of it (row-major in its dimensions): values
// to .. to + length - 1 are those of the graph's output node `output` (its position among Graph::outputs) at at, at +
// step, ... among that node's NHWC values of the sample. A level's channel of YOLOv8's output0 is one run.
struct OutputRun {
  int output;
  int64_t to, at, step, length;
};
std::vector<OutputRun> output_runs(const Graph& g, const std::vector<ActShape>& shapes, const ModelOutput& out);

// A batch of `out` from `node_values[k]`, `batch` samples of the graph's k-th output node (NHWC), as the engines'
// run_outputs return them.
template <typename T>
std::vector<T> arrange_output(const std::vector<OutputRun>& runs, const std::vector<std::vector<T>>& node_values,
                              int64_t batch);  // for float and int32_t: graph/output_view.cpp

}  // namespace octet
