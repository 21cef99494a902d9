// The decodes of detection heads' values (graph/output_view.h's YoloDecode:
// YOLOv5's, YOLOv8's boxes, class sigmoids and keypoints; an output's SiLU): checked, written as JSON and
// applied to an output node's float values, where they leave octet, before
// they are arranged.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "graph/output_view.h"

namespace octet {

class Graph;
struct ActShape;

// Fails unless `d` decodes a node of shape `s` read as `groups` groups. YOLOv5's: a positive finite stride, a
// positive finite width and height per anchor, at least 5 values per anchor (box, objectness, classes). YOLOv8's
// boxes: a positive finite stride, one group of 4 x B channels; its keypoints: the same of K x 3.
void check_decode(const YoloDecode& d, int groups, const ActShape& s);
// How many values a position of `channels` values has decoded (4 for YOLOv8's boxes, else as many).
int64_t decoded_channels(const YoloDecode& d, int64_t channels);
// Whether any output node's values are decoded (int32 logits cannot be).
bool has_decoded_outputs(const Graph& g);
// Whether model output `m`'s values are decoded.
bool output_decoded(const Graph& g, const ModelOutput& m);
// The decode of the graph's outputs (or of model output `m`), as the front doors name it: "yolov5", "yolov8"; empty
// where none is.
std::string decode_name(const Graph& g);
std::string decode_name(const Graph& g, const ModelOutput& m);
// The same as a sentence names it: "YOLOv5's", "YOLOv8's".
std::string decode_title(const std::string& name);

nlohmann::json decode_json(const YoloDecode& d);
YoloDecode decode_from_json(const nlohmann::json& j);  // fails naming the malformed field

// YOLOv5's value k of anchor a at (h, w), decoded from v.
float yolo_decoded(const YoloDecode& d, float v, int64_t a, int64_t k, int64_t h, int64_t w);
// Decodes `batch` samples of a node of shape `s` (NHWC) read through `view` (nothing without a decode): in place,
// or, where the decode makes fewer values (YOLOv8's boxes), into a vector of the decoded values (NHWC) that
// replaces them.
void decode_node_values(const OutputView& view, const ActShape& s, std::vector<float>& values, int64_t batch);
// The same for each output node that has a decode: node_values[k] holds output node k's (NHWC), as the engines
// return them.
void decode_outputs(const Graph& g, const std::vector<ActShape>& shapes, std::vector<std::vector<float>>& node_values,
                    int64_t batch);

}  // namespace octet
