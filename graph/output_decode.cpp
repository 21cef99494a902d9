#include "graph/output_decode.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/graph.h"
#include "graph/ops/float_reference.h"

namespace octet {

void check_decode(const YoloDecode& d, int groups, const ActShape& s) {
  check(std::isfinite(d.stride) && d.stride > 0, "YOLOv5 decode's stride " + std::to_string(d.stride) +
                                                     " is not a positive number");
  check(d.anchors.size() == 2 * static_cast<size_t>(groups),
        "YOLOv5 decode has " + std::to_string(d.anchors.size()) + " anchor sizes for " + std::to_string(groups) +
            " anchors (a width and a height each)");
  for (float size : d.anchors)
    check(std::isfinite(size) && size > 0, "YOLOv5 decode's anchor size " + std::to_string(size) +
                                               " is not a positive number");
  check(s.c / groups >= 5, "YOLOv5 decode of " + std::to_string(s.c / groups) +
                               " values per anchor (a box, an objectness and classes: 5 or more)");
}

bool has_decoded_outputs(const Graph& g) {
  for (int o : g.outputs())
    if (g.nodes[static_cast<size_t>(o)].view.decode.stride != 0) return true;
  return false;
}

bool output_decoded(const Graph& g, const ModelOutput& m) {
  return g.nodes[static_cast<size_t>(m.nodes[0])].view.decode.stride != 0;
}

nlohmann::json decode_json(const YoloDecode& d) {
  return {{"kind", kDecodeKind}, {"stride", d.stride}, {"anchors", d.anchors}};
}

YoloDecode decode_from_json(const nlohmann::json& j) {
  check(j.is_object() && j.value("kind", std::string()) == kDecodeKind, "decode is not {\"kind\": \"yolov5\", ...}");
  const nlohmann::json &stride = j.at("stride"), &anchors = j.at("anchors");
  check(stride.is_number(), "decode's stride is not a number");
  check(anchors.is_array(), "decode's anchors are not an array");
  YoloDecode d;
  d.stride = stride.get<float>();
  for (const nlohmann::json& size : anchors) {
    check(size.is_number(), "decode's anchor size " + size.dump() + " is not a number");
    d.anchors.push_back(size.get<float>());
  }
  check(d.stride != 0, "decode's stride is 0");
  return d;
}

float yolo_decoded(const YoloDecode& d, float v, int64_t a, int64_t k, int64_t h, int64_t w) {
  const float s = 1.0f / (1.0f + std::exp(-v));
  if (k < 2) return (s * 2.0f + (static_cast<float>(k == 0 ? w : h) - 0.5f)) * d.stride;
  if (k < 4) {
    const float twice = s * 2.0f;
    return twice * twice * d.anchors[static_cast<size_t>(2 * a + k - 2)];
  }
  return s;
}

void decode_node_values(const OutputView& view, const ActShape& s, float* values, int64_t batch) {
  const YoloDecode& d = view.decode;
  if (d.stride == 0) return;
  const int64_t per_anchor = s.c / view.groups, rows = batch * s.h, row_values = int64_t(s.w) * s.c;
  // Image row by image row on the threads (YOLOv5s at 640 x 640: 2.1 M values an image); per anchor, the box's four
  // values, then objectness and classes, which are their sigmoids.
#pragma omp parallel for if (rows * row_values >= ops::kMinParallelElements)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t h = row % s.h;
    float* v = values + row * row_values;
    for (int64_t w = 0; w < s.w; ++w)
      for (int64_t a = 0; a < view.groups; ++a, v += per_anchor) {
        for (int64_t k = 0; k < 4; ++k) v[k] = yolo_decoded(d, v[k], a, k, h, w);
        for (int64_t k = 4; k < per_anchor; ++k) v[k] = 1.0f / (1.0f + std::exp(-v[k]));
      }
  }
}

void decode_outputs(const Graph& g, const std::vector<ActShape>& shapes, std::vector<std::vector<float>>& node_values,
                    int64_t batch) {
  for (int o : g.outputs())
    decode_node_values(g.nodes[static_cast<size_t>(o)].view, shapes[static_cast<size_t>(o)],
                       node_values[static_cast<size_t>(o - g.first_output())].data(), batch);
}

}  // namespace octet
