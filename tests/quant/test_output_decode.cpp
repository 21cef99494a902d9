// YOLOv5's decode of a detection head's values (graph/output_decode.h): the
// values it gives against YOLOv5's Detect formulas, the graph JSON that
// records it, and the decodes a graph refuses.
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
  g.nodes[static_cast<size_t>(g.find("p3"))].view = {"output0", 2, "ahwk", 3, decode};
  return g;
}

const YoloDecode kDecode{8.0f, {10.0f, 13.0f, 16.0f, 30.0f}};

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
  const std::vector<float> rows = arrange_output(output_sources(g, shapes, outputs[0]), values, 2);
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
  EXPECT_NE(refusal({8.0f, {10.0f, 13.0f}}).find("output 'p3' of 'output0': YOLOv5 decode has 2 anchor sizes for 2 "
                                                 "anchors"),
            std::string::npos);
  EXPECT_NE(refusal({-8.0f, kDecode.anchors}).find("stride -8.000000 is not a positive number"), std::string::npos);
  EXPECT_NE(refusal({8.0f, {10.0f, 0.0f, 16.0f, 30.0f}}).find("anchor size 0.000000"), std::string::npos);
  Graph unviewed = level(kDecode);
  unviewed.nodes.back().view = {"", 1, "", 1, kDecode};
  EXPECT_NE(error_of([&] { unviewed.validate(); }).find("output 'p3' of '': a decode without a view"),
            std::string::npos);
  Graph few = level(kDecode);
  few.nodes.back().view.groups = 3;  // 4 values per anchor: no class
  few.nodes.back().view.decode.anchors = {1, 1, 1, 1, 1, 1};
  EXPECT_NE(error_of([&] { few.validate(); }).find("decode of 4 values per anchor"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(level(kDecode).to_json());
  j.back()["view"]["decode"]["kind"] = "yolov8";
  EXPECT_NE(error_of([&] { Graph::from_json(j.dump()); }).find("view: decode is not {\"kind\": \"yolov5\""),
            std::string::npos);
}

}  // namespace
}  // namespace octet
