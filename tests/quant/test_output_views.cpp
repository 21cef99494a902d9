// Detection heads' outputs read through their convs' views (graph/output_view.h):
// the rows each view gives against the loops PyTorch's view/permute/reshape/cat
// stand for, the graph JSON that records them, and the views a graph refuses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// Two levels of a head reading the input: "fine" 6 channels (A = 2 anchors of K = 3) at 4 x 5, "coarse" 6 at 2 x 3.
Graph two_levels(const OutputView& fine, const OutputView& coarse) {
  GraphBuilder b;
  const int x = b.input(3, 8, 10);
  const int f = b.conv("fine", x, 6, 3, 2, 1, true);
  const int c = b.conv("coarse", x, 6, 3, 4, 1, true);
  Graph g = b.finish();
  g.place_outputs_last({f, c});
  g.nodes[static_cast<size_t>(g.find("fine"))].view = fine;
  g.nodes[static_cast<size_t>(g.find("coarse"))].view = coarse;
  return g;
}

// Values of a sample of node `shape` in NHWC order: value v = 1000 * part + index, so each is unique.
std::vector<float> nhwc_values(const ActShape& s, int part) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1000.0f * part + static_cast<float>(i);
  return v;
}

float at_nhwc(const std::vector<float>& v, const ActShape& s, int c, int y, int x) {
  return v[(static_cast<size_t>(y) * s.w + x) * s.c + c];
}

TEST(OutputViews, RetinaNetRowsAreEachLevelsHwakConcatenated) {
  const Graph g = two_levels({"cls", 2, "hwak", 3, {}, 1, {}}, {"cls", 2, "hwak", 3, {}, 1, {}});
  const std::vector<ActShape> shapes = g.shapes();
  const std::vector<ModelOutput> outputs = model_outputs(g, shapes);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name, "cls");
  EXPECT_EQ(outputs[0].dims, (std::vector<int64_t>{4 * 5 * 2 + 2 * 3 * 2, 3}));
  std::vector<std::vector<float>> parts;  // each output node's one sample
  for (size_t k = 0; k < 2; ++k)
    parts.push_back(nhwc_values(shapes[static_cast<size_t>(outputs[0].nodes[k])], static_cast<int>(k)));
  const std::vector<float> rows = arrange_output(output_runs(g, shapes, outputs[0]), parts, 1);
  std::vector<float> expected;  // view(N, A, K, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, K), then cat(dim=1)
  for (size_t k = 0; k < 2; ++k) {
    const ActShape& s = shapes[static_cast<size_t>(outputs[0].nodes[k])];
    for (int y = 0; y < s.h; ++y)
      for (int x = 0; x < s.w; ++x)
        for (int a = 0; a < 2; ++a)
          for (int c = 0; c < 3; ++c) expected.push_back(at_nhwc(parts[k], s, a * 3 + c, y, x));
  }
  EXPECT_EQ(rows, expected);
}

TEST(OutputViews, YoloKeepsAnchorsFirstAndBatchesStayApart) {
  const Graph g = two_levels({"p2", 2, "ahwk", 1, {}, 1, {}}, {});
  const std::vector<ActShape> shapes = g.shapes();
  const std::vector<ModelOutput> outputs = model_outputs(g, shapes);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].dims, (std::vector<int64_t>{2, 4, 5, 3}));
  EXPECT_EQ(outputs[1].dims, (std::vector<int64_t>{6, 2, 3})) << "an output without a view is its NCHW values";
  const ActShape s = shapes[static_cast<size_t>(outputs[0].nodes[0])];
  std::vector<float> two = nhwc_values(s, 0), second = nhwc_values(s, 7);
  two.insert(two.end(), second.begin(), second.end());
  const std::vector<float> y = arrange_output<float>(output_runs(g, shapes, outputs[0]), {two, {}}, 2);
  ASSERT_EQ(y.size(), two.size());
  // [n][a][h][w][k] = channel a * 3 + k at (h, w) of sample n
  EXPECT_EQ(y[((1 * 4 + 2) * 5 + 3) * 3 + 2], at_nhwc(nhwc_values(s, 0), s, 1 * 3 + 2, 2, 3));
  EXPECT_EQ(y[static_cast<size_t>(s.numel()) + ((0 * 4 + 1) * 5 + 4) * 3 + 1], at_nhwc(second, s, 1, 1, 4));
  const std::vector<float> coarse = nhwc_values(shapes[2], 0);
  const std::vector<float> nchw = arrange_output<float>(output_runs(g, shapes, outputs[1]), {{}, coarse}, 1);
  EXPECT_EQ(nchw[(4 * 2 + 1) * 3 + 2], at_nhwc(coarse, shapes[2], 4, 1, 2));
}

TEST(OutputViews, JsonKeepsViewsAndGraphsWithoutThemAreUnchanged) {
  const Graph plain = two_levels({}, {});
  EXPECT_EQ(plain.to_json().find("\"view\""), std::string::npos);
  const Graph g = two_levels({"boxes", 2, "hwak", 3, {}, 1, {}}, {"boxes", 2, "hwak", 3, {}, 1, {}});
  const Graph back = Graph::from_json(g.to_json());
  for (size_t i = 0; i < g.nodes.size(); ++i) EXPECT_EQ(back.nodes[i].view, g.nodes[i].view) << g.nodes[i].name;
  EXPECT_TRUE(has_output_views(back));
  EXPECT_FALSE(has_output_views(plain));
}

TEST(OutputViews, MalformedViewsAreRefusedNamingTheNode) {
  const auto refusal = [](const OutputView& fine, const OutputView& coarse) {
    return error_of([&] { two_levels(fine, coarse).validate(); });
  };
  const auto rows = [](int groups, const char* order, int merged) {
    return OutputView{"r", groups, order, merged, {}, 1, {}};
  };
  EXPECT_NE(refusal(rows(2, "hwaa", 3), {}).find("output 'fine' of 'r': view order 'hwaa'"), std::string::npos);
  EXPECT_NE(refusal(rows(4, "hwak", 3), {}).find("4 groups do not divide 6 channels"), std::string::npos);
  EXPECT_NE(refusal(rows(2, "hwak", 5), {}).find("merges 5 leading and 1 trailing axes (1 to 4 leading"), std::string::npos);
  EXPECT_NE(refusal(rows(2, "hwak", 3), rows(3, "hwak", 3)).find("cannot be concatenated to the rows of 'r'"),
            std::string::npos)
      << "rows of 3 and of 2 values";
  nlohmann::json j = nlohmann::json::parse(two_levels({}, {}).to_json());
  j[1]["view"] = {{"name", "r"}, {"groups", 1}, {"order", "akhw"}, {"merged", 1}};
  j.erase(j.begin() + 2);  // "fine" is the one output, its view kept
  j[1].erase("output");
  EXPECT_NO_THROW(Graph::from_json(j.dump()));
  nlohmann::json inner = nlohmann::json::parse(two_levels({}, {}).to_json());
  inner[0]["view"] = {{"name", "r"}, {"groups", 1}, {"order", "akhw"}, {"merged", 1}};
  EXPECT_NE(error_of([&] { Graph::from_json(inner.dump()); }).find("'input' has an output view and is not an output"),
            std::string::npos);
}

}  // namespace
}  // namespace octet
