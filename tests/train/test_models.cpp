// Parameter counts and structure of the registry models, counted from the
// graph and, where LibTorch is built, also from the module built from it.
#include <gtest/gtest.h>

#include "common/tensor.h"
#include "graph/op_traits.h"
#include "models/registry.h"
#ifdef OCTET_HAVE_TORCH
#include "train/graph_net.h"
#endif

namespace octet {
namespace {

struct CountCase {
  const char* model;
  int channels, size;
  bool batch_norm;
  int64_t parameters;
};

class ParameterCount : public ::testing::TestWithParam<CountCase> {};

TEST_P(ParameterCount, MatchesThePublishedFigure) {
  const CountCase& c = GetParam();
  const ModelOptions o{c.channels, c.size, c.size, 10, c.batch_norm};
  const Graph g = build_model(c.model, o);
  int64_t from_graph = 0;
  for (const auto& p : g.params())
    if (p.trainable) from_graph += shape_numel(Shape(p.shape.begin(), p.shape.end()));
  EXPECT_EQ(from_graph, c.parameters);
#ifdef OCTET_HAVE_TORCH
  GraphNet net(g);
  int64_t from_torch = 0;
  for (const auto& p : net->parameters()) from_torch += p.numel();
  EXPECT_EQ(from_torch, c.parameters);
#endif
}

INSTANTIATE_TEST_SUITE_P(Models, ParameterCount,
                         ::testing::Values(CountCase{"resnet18", 3, 32, true, 11173962},
                                           CountCase{"resnet18", 3, 32, false, 11164362},
                                           CountCase{"resnet20", 3, 32, true, 269722},
                                           CountCase{"resnet56", 3, 32, true, 853018},
                                           CountCase{"lenet5", 3, 32, true, 62006},
                                           CountCase{"lenet5", 1, 28, true, 61706}),
                         [](const auto& info) {
                           const CountCase& c = info.param;
                           return std::string(c.model) + "_" + std::to_string(c.channels) + "x" +
                                  std::to_string(c.size) + (c.batch_norm ? "_bn" : "_nobn");
                         });

TEST(ResNet18, HasTwentyConvsAndA512InputClassifier) {
  const Graph g = build_model("resnet18", ModelOptions{});
  int convs = 0, last_linear_in = 0;
  const auto shapes = g.shapes();
  for (const Node& n : g.nodes) {
    convs += n.op == Op::Conv2d;
    if (n.op == Op::Linear) last_linear_in = shapes[n.inputs[0]].c;
  }
  EXPECT_EQ(convs, 20);
  EXPECT_EQ(last_linear_in, 512);
}

TEST(ResNetCifar, DepthsFollowSixNPlusTwo) {
  for (int depth : {20, 32, 44, 56}) {
    const Graph g = build_model("resnet" + std::to_string(depth), ModelOptions{});
    int weighted = 0;
    for (const Node& n : g.nodes) weighted += op_traits(n.op).weighted;
    EXPECT_EQ(weighted, depth);
  }
}

TEST(Registry, UnknownModelNamesTheKnownOnes) {
  try {
    build_model("resnet9000", ModelOptions{});
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("resnet20"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace octet
