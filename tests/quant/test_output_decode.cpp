// YOLO's decodes of a detection head's values (graph/output_decode.h): the
// values they give against YOLOv5's and YOLOv8's Detect formulas, YOLOv8's
// parts placed in one output, the graph JSON that records them, and the
// decodes and placements a graph refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "graph/output_decode.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// A level of 2 anchors x 6 values (box, objectness, 1 class) at 3 x 4, read as [N, A, H, W, K].
Graph level(const YoloDecode& decode) {
  GraphBuilder b;
  const int x = b.input(3, 6, 8);
  const int p = b.conv("p3", x, 12, 3, 2, 1, true);
  Graph g = b.finish();
  g.place_outputs_last({p});
  g.nodes[static_cast<size_t>(g.find("p3"))].view = {"output0", 2, "ahwk", 3, decode, 1, {}};
  return g;
}

const YoloDecode kDecode{DecodeKind::Yolov5, 8.0f, {10.0f, 13.0f, 16.0f, 30.0f}};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST(OutputDecode, ValuesAreYolov5DetectsBoxesAndScores) {
  const Graph g = level(kDecode);
  const std::vector<ActShape> shapes = g.shapes();
  const ActShape& s = shapes.back();
  ASSERT_EQ(s, (ActShape{12, 3, 4}));
  std::vector<std::vector<float>> values{std::vector<float>(static_cast<size_t>(2 * s.numel()))};
  for (size_t i = 0; i < values[0].size(); ++i) values[0][i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  const std::vector<float> raw = values[0];
  decode_outputs(g, shapes, values, 2);
  const std::vector<ModelOutput> outputs = model_outputs(g, shapes);
  ASSERT_EQ(outputs[0].dims, (std::vector<int64_t>{2 * 3 * 4, 6}));
  const std::vector<float> rows = arrange_output(output_runs(g, shapes, outputs[0]), values, 2);
  size_t at = 0;  // rows of [N, A, H, W, K] in order, as y.view(bs, na * nx * ny, no)
  for (int n = 0; n < 2; ++n)
    for (int a = 0; a < 2; ++a)
      for (int h = 0; h < 3; ++h)
        for (int w = 0; w < 4; ++w)
          for (int k = 0; k < 6; ++k, ++at) {
            const double y = sigmoid(raw[static_cast<size_t>(((n * 3 + h) * 4 + w) * 12 + a * 6 + k)]);
            const double grid[2] = {w - 0.5, h - 0.5};
            const double want = k < 2   ? (y * 2 + grid[k]) * 8.0
                                : k < 4 ? (y * 2) * (y * 2) * kDecode.anchors[static_cast<size_t>(2 * a + k - 2)]
                                        : y;
            EXPECT_NEAR(rows[at], want, 2e-6 * std::max(1.0, std::abs(want))) << n << a << h << w << k;
          }
  EXPECT_TRUE(has_decoded_outputs(g));
  EXPECT_FALSE(has_decoded_outputs(level({})));
}

TEST(OutputDecode, JsonKeepsItAndGraphsWithoutOneAreUnchanged) {
  const Graph g = level(kDecode);
  const Graph read = Graph::from_json(g.to_json());
  EXPECT_EQ(read.nodes.back().view, g.nodes.back().view);
  EXPECT_EQ(nlohmann::json::parse(g.to_json()).back()["view"]["decode"],
            nlohmann::json::parse(R"({"kind": "yolov5", "stride": 8.0, "anchors": [10.0, 13.0, 16.0, 30.0]})"));
  EXPECT_FALSE(nlohmann::json::parse(level({}).to_json()).back()["view"].contains("decode"));
}

TEST(OutputDecode, MalformedDecodesAreRefusedNamingTheOutput) {
  const auto refusal = [](const YoloDecode& d) { return error_of([&] { level(d).validate(); }); };
  const auto yolov5 = [](float stride, std::vector<float> anchors) {
    return YoloDecode{DecodeKind::Yolov5, stride, std::move(anchors)};
  };
  EXPECT_NE(refusal(yolov5(8.0f, {10.0f, 13.0f}))
                .find("output 'p3' of 'output0': YOLOv5 decode has 2 anchor sizes for 2 anchors"),
            std::string::npos);
  EXPECT_NE(refusal(yolov5(-8.0f, kDecode.anchors)).find("stride -8.000000 is not a positive number"),
            std::string::npos);
  EXPECT_NE(refusal(yolov5(8.0f, {10.0f, 0.0f, 16.0f, 30.0f})).find("anchor size 0.000000"), std::string::npos);
  Graph unviewed = level(kDecode);
  unviewed.nodes.back().view = {"", 1, "", 1, kDecode, 1, {}};
  EXPECT_NE(error_of([&] { unviewed.validate(); }).find("output 'p3' of '': a decode without a view"),
            std::string::npos);
  Graph few = level(kDecode);
  few.nodes.back().view.groups = 3;  // 4 values per anchor: no class
  few.nodes.back().view.decode.anchors = {1, 1, 1, 1, 1, 1};
  EXPECT_NE(error_of([&] { few.validate(); }).find("decode of 4 values per anchor"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(level(kDecode).to_json());
  j.back()["view"]["decode"]["kind"] = "yolov9";
  EXPECT_NE(error_of([&] { Graph::from_json(j.dump()); }).find("view: decode is not {\"kind\": \"yolov5\""),
            std::string::npos);
}

// YOLOv8's head of two levels (4 x 4 and 2 x 2, strides 2 and 4): boxes of 4 sides x 16 bins, 2 classes, each
// conv placed in output0 [4 + 2, 16 + 4] at (0 or 4, its level's first position).
Graph yolov8_levels() {
  GraphBuilder b;
  const int x = b.input(3, 8, 8);
  const int fine = b.conv("stem", x, 8, 3, 2, 1, true), coarse = b.conv("down", fine, 8, 3, 2, 1, true);
  const int box_fine = b.conv("box_fine", fine, 64, 1, 1, 0, true);
  const int cls_fine = b.conv("cls_fine", fine, 2, 1, 1, 0, true);
  const int box_coarse = b.conv("box_coarse", coarse, 64, 1, 1, 0, true);
  const int cls_coarse = b.conv("cls_coarse", coarse, 2, 1, 1, 0, true);
  Graph g = b.finish();
  g.place_outputs_last({box_fine, cls_fine, box_coarse, cls_coarse});
  const auto place = [&](const char* node, DecodeKind kind, float stride, int64_t row, int64_t position) {
    g.nodes[static_cast<size_t>(g.find(node))].view = {"output0", 1, "akhw", 2, {kind, stride, {}}, 2, {row, position}};
  };
  place("box_fine", DecodeKind::Yolov8Boxes, 2.0f, 0, 0);
  place("cls_fine", DecodeKind::Sigmoid, 0, 4, 0);
  place("box_coarse", DecodeKind::Yolov8Boxes, 4.0f, 0, 16);
  place("cls_coarse", DecodeKind::Sigmoid, 0, 4, 16);
  return g;
}

TEST(OutputDecode, Yolov8PartsAreDflBoxesAndClassSigmoidsPlacedByLevel) {
  const Graph g = yolov8_levels();
  const std::vector<ActShape> shapes = g.shapes();
  std::vector<std::vector<float>> values;
  for (int o : g.outputs()) {
    values.emplace_back(static_cast<size_t>(2 * shapes[static_cast<size_t>(o)].numel()));
    for (size_t i = 0; i < values.back().size(); ++i)
      values.back()[i] = std::sin(0.37f * static_cast<float>(i) + static_cast<float>(o)) * 4.0f;
  }
  const std::vector<std::vector<float>> raw = values;
  decode_outputs(g, shapes, values, 2);
  EXPECT_EQ(values[0].size(), 2u * 4 * 4 * 4) << "4 values a position where there were 64";
  const std::vector<ModelOutput> outputs = model_outputs(g, shapes);
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].dims, (std::vector<int64_t>{6, 20}));
  const std::vector<float> y = arrange_output(output_runs(g, shapes, outputs[0]), values, 2);
  for (int n = 0; n < 2; ++n)
    for (int level = 0; level < 2; ++level) {
      const int side = level == 0 ? 4 : 2, first = level == 0 ? 0 : 16;
      const double stride = level == 0 ? 2.0 : 4.0;
      const std::vector<float>& boxes = raw[static_cast<size_t>(2 * level)];
      const std::vector<float>& classes = raw[static_cast<size_t>(2 * level + 1)];
      for (int p = 0; p < side * side; ++p) {
        double distance[4];  // the expectation of each side's softmax over its 16 bins
        for (int k = 0; k < 4; ++k) {
          double sum = 0, weighted = 0;
          for (int bin = 0; bin < 16; ++bin) {
            const double e = std::exp(boxes[static_cast<size_t>((n * side * side + p) * 64 + k * 16 + bin)]);
            sum += e;
            weighted += e * bin;
          }
          distance[k] = weighted / sum;
        }
        const double cx = p % side + 0.5, cy = p / side + 0.5;
        const double want[6] = {(cx + (distance[2] - distance[0]) / 2) * stride,
                                (cy + (distance[3] - distance[1]) / 2) * stride,
                                (distance[0] + distance[2]) * stride, (distance[1] + distance[3]) * stride,
                                sigmoid(classes[static_cast<size_t>((n * side * side + p) * 2)]),
                                sigmoid(classes[static_cast<size_t>((n * side * side + p) * 2 + 1)])};
        for (int k = 0; k < 6; ++k)
          EXPECT_NEAR(y[static_cast<size_t>((n * 6 + k) * 20 + first + p)], want[k], 2e-5 * std::max(1.0, want[k]))
              << n << level << p << k;
      }
    }
  const Graph read = Graph::from_json(g.to_json());
  for (size_t i = 0; i < g.nodes.size(); ++i) EXPECT_EQ(read.nodes[i].view, g.nodes[i].view) << g.nodes[i].name;
  EXPECT_EQ(nlohmann::json::parse(g.to_json())[static_cast<size_t>(g.find("box_coarse"))]["view"],
            nlohmann::json::parse(R"({"name": "output0", "groups": 1, "order": "akhw", "merged": 2, "merged_last": 2,
                                      "at": [0, 16], "decode": {"kind": "yolov8-boxes", "stride": 4.0}})"));
  EXPECT_EQ(decode_name(g), "yolov8");
}

TEST(OutputDecode, Yolov8KeypointsAreCellOffsetsInPixelsAndVisibilitySigmoids) {
  const ActShape s{6, 2, 3};  // 2 keypoints of (x, y, visibility), 2 x 3 cells
  OutputView view;  // a part of output0 at (7, 0), [K, H x W]
  view.name = "output0", view.order = "akhw", view.merged = 2, view.merged_last = 2, view.at = {7, 0};
  view.decode.kind = DecodeKind::Yolov8Keypoints, view.decode.stride = 8.0f;
  std::vector<float> values(static_cast<size_t>(2 * s.numel()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(0.61f * static_cast<float>(i)) * 3.0f;
  const std::vector<float> raw = values;
  decode_node_values(view, s, values, 2);
  for (size_t i = 0; i < values.size(); ++i) {  // NHWC
    const int64_t c = static_cast<int64_t>(i) % s.c, w = static_cast<int64_t>(i) / s.c % s.w;
    const int64_t h = static_cast<int64_t>(i) / (s.c * s.w) % s.h;
    const double want = c % 3 == 0 ? (2.0 * raw[i] + w) * 8 : c % 3 == 1 ? (2.0 * raw[i] + h) * 8 : sigmoid(raw[i]);
    EXPECT_NEAR(values[i], want, 1e-5 * std::max(1.0, std::abs(want))) << i;
  }
  EXPECT_EQ(decode_json(view.decode), nlohmann::json::parse(R"({"kind": "yolov8-keypoints", "stride": 8.0})"));
  EXPECT_EQ(decode_from_json(decode_json(view.decode)), view.decode);
  EXPECT_NE(error_of([&] { check_decode(view.decode, 1, ActShape{4, 2, 3}); })
                .find("YOLOv8 keypoint decode of 4 channels in 1 groups (one group of keypoints x 3 values)"),
            std::string::npos);
}

TEST(OutputDecode, SiluOutputsAreTheirAccumulatorsTimesTheirSigmoids) {
  OutputView view;  // output1, [K, H, W]
  view.name = "output1", view.order = "akhw", view.merged = 2, view.decode.kind = DecodeKind::Silu;
  const std::vector<float> raw{-6.0f, -1.278f, -0.5f, 0.0f, 0.75f, 3.0f};
  std::vector<float> values = raw;
  decode_node_values(view, ActShape{3, 1, 2}, values, 1);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_NEAR(values[i], raw[i] * sigmoid(raw[i]), 1e-6) << i;
  EXPECT_EQ(output_part_dims(view, ActShape{3, 1, 2}), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(decode_json(view.decode), nlohmann::json::parse(R"({"kind": "silu"})"));
  EXPECT_EQ(decode_from_json(decode_json(view.decode)), view.decode);
}

TEST(OutputDecode, MisplacedYolov8PartsAreRefusedNamingTheOutput) {
  const auto refusal = [](const char* node, std::vector<int64_t> at) {
    Graph g = yolov8_levels();
    g.nodes[static_cast<size_t>(g.find(node))].view.at = std::move(at);
    return error_of([&] { g.validate(); });
  };
  EXPECT_NE(refusal("cls_coarse", {4, 15}).find("output 'cls_coarse' overlaps another part of 'output0'"),
            std::string::npos);
  EXPECT_NE(refusal("cls_coarse", {4, 17}).find("the parts of output 'output0' (6 x 21) leave values unset"),
            std::string::npos);
  EXPECT_NE(refusal("cls_coarse", {}).find("some of its parts are placed (at) and others follow one another"),
            std::string::npos);
  EXPECT_NE(refusal("cls_coarse", {4}).find("output 'cls_coarse' is placed at 1 indices, its part has 2 dimensions"),
            std::string::npos);
  Graph odd = yolov8_levels();
  odd.nodes[static_cast<size_t>(odd.find("box_fine"))].view.groups = 2;
  EXPECT_NE(error_of([&] { odd.validate(); }).find("YOLOv8 box decode of 64 channels in 2 groups"), std::string::npos);
}

}  // namespace
}  // namespace octet
