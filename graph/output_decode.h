// YOLOv5's decode of a detection head's values (graph/output_view.h's
// YoloDecode): checked, written as JSON and applied to an output node's float
// values, where they leave octet, before they are arranged into rows.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "graph/output_view.h"

namespace octet {

class Graph;
struct ActShape;

// Fails unless `d` decodes a node of shape `s` read as `groups` anchors: a positive finite stride, a positive finite
// width and height per anchor, at least 5 values per anchor (box, objectness, classes).
void check_decode(const YoloDecode& d, int groups, const ActShape& s);
// Whether any output node's values are decoded (int32 logits cannot be).
bool has_decoded_outputs(const Graph& g);
// Whether model output `m`'s values are decoded; kDecodeKind names the decode where the front doors report it.
bool output_decoded(const Graph& g, const ModelOutput& m);
constexpr const char* kDecodeKind = "yolov5";

nlohmann::json decode_json(const YoloDecode& d);
YoloDecode decode_from_json(const nlohmann::json& j);  // fails naming the malformed field

// Value k of anchor a at (h, w), decoded from v.
float yolo_decoded(const YoloDecode& d, float v, int64_t a, int64_t k, int64_t h, int64_t w);
// Decodes, in place, `batch` samples of a node of shape `s` (NHWC) read through `view` (nothing without a decode).
void decode_node_values(const OutputView& view, const ActShape& s, float* values, int64_t batch);
// Decodes, in place, `batch` samples of each output node that has a decode: node_values[k] holds output node k's
// (NHWC), as the engines return them.
void decode_outputs(const Graph& g, const std::vector<ActShape>& shapes, std::vector<std::vector<float>>& node_values,
                    int64_t batch);

}  // namespace octet
