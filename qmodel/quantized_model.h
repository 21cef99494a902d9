// The quantized model: an inference graph whose activations are int8 with one
// scale per tensor (q = clamp(round(x * scale), -128, 127)) and whose weights
// are int8 with per-output-channel (or per-tensor) scales, int32 biases at
// scale s_in * s_w and fixed-point requantization parameters, so inference is
// integer-only. The last node (a linear, or a dense conv where the model returns
// an image of logits: a segmentation's) outputs its int32 accumulators: the
// logits (logits_shape), which `logit_scale` turns back into floats.
//
// File: safetensors (common/safetensors.h). Tensors "<node>.weight" (I8),
// "<node>.weight_scale" (F32), "<node>.bias", "<node>.multiplier",
// "<node>.shift", "<node>.skip_multiplier" (I32), "<output>.logit_scale" (F32);
// __metadata__ holds the format tag and version, the graph with every node's
// scale, the dataset and normalisation, the calibration record and the
// identity of the float checkpoint it came from. A node kept in float has
// "precision": "float" and the tensors "<node>.float_weight" and
// "<node>.float_bias" (F32) in place of its integer ones. A PRelu has
// "<node>.slope" (F32), in int8 and in float.
#pragma once

#include <string>
#include <vector>

#include "common/tensor.h"
#include "graph/graph.h"
#include "graph/node_quant.h"

namespace octet {

// Which float checkpoint a quantized model was made from, so a mismatched pair
// (a model quantized from another network, or other weights) is refused.
struct CheckpointIdentity {
  std::string model;          // registry name, e.g. "resnet20"
  std::string params_sha256;  // the parameters: names, shapes and values
  std::string graph_sha256;   // the training graph's JSON (the graph signature)

  bool operator==(const CheckpointIdentity& o) const {
    return model == o.model && params_sha256 == o.params_sha256 && graph_sha256 == o.graph_sha256;
  }
  bool operator!=(const CheckpointIdentity& o) const { return !(*this == o); }
  std::string describe() const;  // "resnet20 (parameters sha256 1a2b3c4d5e6f, graph 0f1e2d3c4b5a)"
};

struct QuantizedModel {
  Graph graph;  // inference graph; conv/linear may carry a fused residual input
  std::vector<NodeQuant> quant;  // one per graph node
  // Provenance and what is needed to feed it.
  std::string model, dataset;
  std::vector<std::string> classes;
  std::vector<float> mean, std;
  std::string method, granularity, scheme, weight_rounding;
  int64_t calibration_samples = 0;
  // Quantized from the checkpoint's folded model after cross-layer equalization
  // (quant/equalize.h): layer outputs compare with that model's, not the
  // checkpoint's. With bias correction (quant/bias_correction.h).
  bool equalized = false, bias_corrected = false;
  CheckpointIdentity source;  // the float checkpoint it was quantized from

  int output() const { return graph.output(); }
  int num_classes() const { return graph.nodes.back().channels; }
  // Rows of num_classes() logits per image: H x W of an image of logits, else 1.
  int64_t predictions_per_image() const;
  // Whether some node runs in float (NodeQuant::in_float).
  bool mixed_precision() const;
  // Whether some activation has a zero point (NodeQuant::zero_point).
  bool has_zero_points() const;
  // Whether some activation is wide (NodeQuant::bits above 8).
  bool has_wide_activations() const;
  // Bytes per stored value of node `node`'s output: 1 (int8), 2 (wide, int16).
  int64_t value_bytes(int node) const { return quant.at(node).bits > 8 ? 2 : 1; }
  // Per node: kept in float and read only by nodes kept in float, so its
  // output stays float (a float segment) and is never rounded to int8.
  std::vector<bool> float_outputs() const;

  // Checks every invariant the runtimes rely on (shapes, dtypes, ranges, graph
  // consistency); fails with a message naming the node and the field.
  void validate(const std::string& where = "quantized model") const;
};

constexpr const char* kQuantizedFormat = "octet-quantized";
// Version 2 records the source checkpoint's identity (version 1 did not).
constexpr int kQuantizedVersion = 2;
// Version 3: some nodes run in float (NodeQuant::in_float); written only then,
// so an all-int8 model's file is the same as before.
constexpr int kQuantizedMixedVersion = 3;
// Version 4: some activations have a zero point (NodeQuant::zero_point), and
// some nodes may run in float; written only then.
constexpr int kQuantizedZeroPointVersion = 4;
// Version 5: some activations are wide (NodeQuant::bits), and may have zero
// points or float nodes as in version 4; written only then.
constexpr int kQuantizedWideVersion = 5;

void save_quantized_model(const QuantizedModel& model, const std::string& path);
QuantizedModel load_quantized_model(const std::string& path);

}  // namespace octet
