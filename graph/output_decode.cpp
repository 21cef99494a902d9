#include "graph/output_decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/graph.h"
#include "graph/ops/float_reference.h"

namespace octet {

namespace {
constexpr const char* kYolov5 = "yolov5";
constexpr const char* kYolov8 = "yolov8";  // a model output of YOLOv8's box and class parts
constexpr const char* kYolov8Boxes = "yolov8-boxes";
constexpr const char* kYolov8Keypoints = "yolov8-keypoints";
constexpr const char* kSigmoid = "sigmoid";
constexpr const char* kSilu = "silu";

// e^x within an ulp where it is a normal float, clamped to [e^-87, e^88] (NaN to e^88): Cephes' expf (2^n e^r, |r|
// <= ln 2 / 2, a degree-5 polynomial) in a form the compiler vectorises (CMakeLists.txt: -fno-trapping-math);
// libm's expf is a call per value, and a YOLOv8n-seg image at 640 x 640 decodes 2 M of them.
inline float exp_approx(float x) {
  x = x < 88.0f ? x : 88.0f;
  x = x > -87.0f ? x : -87.0f;
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n ln 2, ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return (p * r * r + r + 1.0f) * scale;
}

inline float sigmoid(float v) { return 1.0f / (1.0f + exp_approx(-v)); }

void check_stride(const YoloDecode& d) {
  check(std::isfinite(d.stride) && d.stride > 0,
        "YOLO decode's stride " + std::to_string(d.stride) + " is not a positive number");
}

// YOLOv8's box at (h, w) from its 4 x `bins` values v: each side's distance the expectation of a softmax over its
// bins (DFL), then dist2bbox's centre and size from the cell's centre, times the stride.
void yolov8_box(const YoloDecode& d, const float* v, int64_t bins, int64_t h, int64_t w, float* box) {
  float distance[4];
  for (int64_t side = 0; side < 4; ++side) {
    const float* x = v + side * bins;
    const float largest = *std::max_element(x, x + bins);
    float sum = 0, weighted = 0;
#pragma omp simd reduction(+ : sum, weighted)
    for (int64_t b = 0; b < bins; ++b) {
      const float e = exp_approx(x[b] - largest);
      sum += e;
      weighted += e * static_cast<float>(b);
    }
    distance[side] = weighted / sum;
  }
  const float cx = static_cast<float>(w) + 0.5f, cy = static_cast<float>(h) + 0.5f;
  const float x1 = cx - distance[0], y1 = cy - distance[1], x2 = cx + distance[2], y2 = cy + distance[3];
  box[0] = (x1 + x2) / 2 * d.stride;
  box[1] = (y1 + y2) / 2 * d.stride;
  box[2] = (x2 - x1) * d.stride;
  box[3] = (y2 - y1) * d.stride;
}
}  // namespace

void check_decode(const YoloDecode& d, int groups, const ActShape& s) {
  if (d.kind == DecodeKind::Yolov8Boxes) {
    check_stride(d);
    check(groups == 1 && s.c % 4 == 0, "YOLOv8 box decode of " + std::to_string(s.c) + " channels in " +
                                           std::to_string(groups) + " groups (one group of 4 sides x bins)");
    return;
  }
  if (d.kind == DecodeKind::Yolov8Keypoints) {
    check_stride(d);
    check(groups == 1 && s.c % 3 == 0, "YOLOv8 keypoint decode of " + std::to_string(s.c) + " channels in " +
                                           std::to_string(groups) + " groups (one group of keypoints x 3 values)");
    return;
  }
  if (d.kind != DecodeKind::Yolov5) return;
  check_stride(d);
  check(d.anchors.size() == 2 * static_cast<size_t>(groups),
        "YOLOv5 decode has " + std::to_string(d.anchors.size()) + " anchor sizes for " + std::to_string(groups) +
            " anchors (a width and a height each)");
  for (float size : d.anchors)
    check(std::isfinite(size) && size > 0, "YOLOv5 decode's anchor size " + std::to_string(size) +
                                               " is not a positive number");
  check(s.c / groups >= 5, "YOLOv5 decode of " + std::to_string(s.c / groups) +
                               " values per anchor (a box, an objectness and classes: 5 or more)");
}

int64_t decoded_channels(const YoloDecode& d, int64_t channels) {
  return d.kind == DecodeKind::Yolov8Boxes ? 4 : channels;
}

bool has_decoded_outputs(const Graph& g) {
  for (int o : g.outputs())
    if (g.nodes[static_cast<size_t>(o)].view.decode.kind != DecodeKind::None) return true;
  return false;
}

namespace {
// The decode of output nodes `nodes` as the front doors name it: YOLOv5's or YOLOv8's where a node has it, else
// a sigmoid's where one has that, else none.
std::string decode_name_of_nodes(const Graph& g, const std::vector<int>& nodes) {
  std::string name;
  for (int o : nodes) {
    const DecodeKind kind = g.nodes[static_cast<size_t>(o)].view.decode.kind;
    if (kind == DecodeKind::Yolov5) return kYolov5;
    if (kind == DecodeKind::Yolov8Boxes || kind == DecodeKind::Yolov8Keypoints) return kYolov8;
    if (kind == DecodeKind::Sigmoid) name = kSigmoid;
    if (kind == DecodeKind::Silu && name.empty()) name = kSilu;
  }
  return name;
}
}  // namespace

std::string decode_name(const Graph& g, const ModelOutput& m) { return decode_name_of_nodes(g, m.nodes); }

std::string decode_name(const Graph& g) { return decode_name_of_nodes(g, g.outputs()); }

bool output_decoded(const Graph& g, const ModelOutput& m) { return !decode_name(g, m).empty(); }

std::string decode_title(const std::string& name) {
  if (name == kYolov5) return "YOLOv5's";
  if (name == kYolov8) return "YOLOv8's";
  if (name == kSilu) return "a SiLU";
  return "a " + name;
}

nlohmann::json decode_json(const YoloDecode& d) {
  if (d.kind == DecodeKind::Sigmoid) return {{"kind", kSigmoid}};
  if (d.kind == DecodeKind::Silu) return {{"kind", kSilu}};
  if (d.kind == DecodeKind::Yolov8Boxes) return {{"kind", kYolov8Boxes}, {"stride", d.stride}};
  if (d.kind == DecodeKind::Yolov8Keypoints) return {{"kind", kYolov8Keypoints}, {"stride", d.stride}};
  return {{"kind", kYolov5}, {"stride", d.stride}, {"anchors", d.anchors}};
}

YoloDecode decode_from_json(const nlohmann::json& j) {
  const std::string kind = j.is_object() ? j.value("kind", std::string()) : std::string();
  YoloDecode d;
  if (kind == kSigmoid) return d.kind = DecodeKind::Sigmoid, d;
  if (kind == kSilu) return d.kind = DecodeKind::Silu, d;
  check(kind == kYolov5 || kind == kYolov8Boxes || kind == kYolov8Keypoints,
        "decode is not {\"kind\": \"yolov5\", ...}, {\"kind\": \"yolov8-boxes\", ...}, {\"kind\": "
        "\"yolov8-keypoints\", ...}, {\"kind\": \"sigmoid\"} or {\"kind\": \"silu\"}");
  d.kind = kind == kYolov5        ? DecodeKind::Yolov5
           : kind == kYolov8Boxes ? DecodeKind::Yolov8Boxes
                                  : DecodeKind::Yolov8Keypoints;
  const nlohmann::json& stride = j.at("stride");
  check(stride.is_number(), "decode's stride is not a number");
  d.stride = stride.get<float>();
  check(d.stride != 0, "decode's stride is 0");
  if (d.kind != DecodeKind::Yolov5) return d;
  const nlohmann::json& anchors = j.at("anchors");
  check(anchors.is_array(), "decode's anchors are not an array");
  for (const nlohmann::json& size : anchors) {
    check(size.is_number(), "decode's anchor size " + size.dump() + " is not a number");
    d.anchors.push_back(size.get<float>());
  }
  return d;
}

float yolo_decoded(const YoloDecode& d, float v, int64_t a, int64_t k, int64_t h, int64_t w) {
  const float s = sigmoid(v);
  if (k < 2) return (s * 2.0f + (static_cast<float>(k == 0 ? w : h) - 0.5f)) * d.stride;
  if (k < 4) {
    const float twice = s * 2.0f;
    return twice * twice * d.anchors[static_cast<size_t>(2 * a + k - 2)];
  }
  return s;
}

void decode_node_values(const OutputView& view, const ActShape& s, std::vector<float>& values, int64_t batch) {
  const YoloDecode& d = view.decode;
  if (d.kind == DecodeKind::None) return;
  const int64_t rows = batch * s.h, row_values = int64_t(s.w) * s.c;
  check(static_cast<int64_t>(values.size()) == rows * row_values, "decode: a node's values are not its shape's");
  if (d.kind == DecodeKind::Sigmoid || d.kind == DecodeKind::Silu) {
    const bool silu = d.kind == DecodeKind::Silu;
#pragma omp parallel for if (rows * row_values >= ops::kMinParallelElements)
    for (int64_t row = 0; row < rows; ++row) {
      float* v = values.data() + row * row_values;
      if (silu) {
#pragma omp simd
        for (int64_t i = 0; i < row_values; ++i) v[i] *= sigmoid(v[i]);
      } else {
#pragma omp simd
        for (int64_t i = 0; i < row_values; ++i) v[i] = sigmoid(v[i]);
      }
    }
  } else if (d.kind == DecodeKind::Yolov8Boxes) {
    const int64_t bins = s.c / 4;
    std::vector<float> boxes(static_cast<size_t>(rows * s.w * 4));
#pragma omp parallel for if (rows * row_values >= ops::kMinParallelElements)
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t w = 0; w < s.w; ++w)
        yolov8_box(d, values.data() + row * row_values + w * s.c, bins, row % s.h, w,
                   boxes.data() + (row * s.w + w) * 4);
    values.swap(boxes);
  } else if (d.kind == DecodeKind::Yolov8Keypoints) {
#pragma omp parallel for if (rows * row_values >= ops::kMinParallelElements)
    for (int64_t row = 0; row < rows; ++row) {
      const float h = static_cast<float>(row % s.h);
      float* v = values.data() + row * row_values;
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t k = 0; k < s.c; k += 3, v += 3) {  // ultralytics' kpts_decode, in its order of operations
          v[0] = (v[0] * 2.0f + static_cast<float>(w)) * d.stride;
          v[1] = (v[1] * 2.0f + h) * d.stride;
          v[2] = sigmoid(v[2]);
        }
    }
  } else if (d.kind == DecodeKind::Yolov5) {
    const int64_t per_anchor = s.c / view.groups;
    // Image row by image row on the threads (YOLOv5s at 640 x 640: 2.1 M values an image); per anchor, the box's
    // four values, then objectness and classes, which are their sigmoids.
#pragma omp parallel for if (rows * row_values >= ops::kMinParallelElements)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t h = row % s.h;
      float* v = values.data() + row * row_values;
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t a = 0; a < view.groups; ++a, v += per_anchor) {
          for (int64_t k = 0; k < 4; ++k) v[k] = yolo_decoded(d, v[k], a, k, h, w);
          for (int64_t k = 4; k < per_anchor; ++k) v[k] = sigmoid(v[k]);
        }
    }
  }
}

void decode_outputs(const Graph& g, const std::vector<ActShape>& shapes, std::vector<std::vector<float>>& node_values,
                    int64_t batch) {
  for (int o : g.outputs())
    decode_node_values(g.nodes[static_cast<size_t>(o)].view, shapes[static_cast<size_t>(o)],
                       node_values[static_cast<size_t>(o - g.first_output())], batch);
}

}  // namespace octet
