// Models of several outputs (graph/graph.h: the last output_count nodes, none
// read by another): how a graph records them, reorders its nodes to place them,
// refuses a file or graph that breaks the rule, and a quantized model of
// several outputs saved, loaded and run, each output its own int32 logits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "qmodel/quantized_model.h"
#include "runtime/cpu/cpu_engine.h"
#include "tests/ops/op_model.h"
#include "tests/ops/reference_int8.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// input -> conv "a" -> conv "b" -> conv "c", and "head" reading "a".
Graph heads_graph() {
  GraphBuilder b;
  const int x = b.input(3, 8, 8);
  const int a = b.conv("a", x, 4, 3, 1, 1, true);
  const int head = b.conv("head", a, 2, 1, 1, 0, true);
  const int c = b.conv("b", a, 5, 3, 2, 1, true);
  b.conv("c", c, 6, 1, 1, 0, true);
  Graph g = b.finish();
  EXPECT_EQ(g.nodes[head].name, "head");
  return g;
}

TEST(GraphOutputs, PlacedLastInTheOrderGivenWithInputsRenumbered) {
  Graph g = heads_graph();
  const std::vector<ActShape> before = g.shapes();
  g.place_outputs_last({g.find("c"), g.find("head")});
  ASSERT_EQ(g.output_count, 2);
  std::vector<std::string> names;
  for (const Node& n : g.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"input", "a", "b", "c", "head"}))
      << "nodes not read stay in order, the outputs follow in the order given";
  EXPECT_EQ(g.outputs(), (std::vector<int>{3, 4}));
  EXPECT_EQ(g.nodes[g.find("head")].inputs, std::vector<int>{g.find("a")});
  EXPECT_EQ(g.nodes[g.find("c")].inputs, std::vector<int>{g.find("b")});
  EXPECT_EQ(g.shapes()[g.find("head")], before[2]);
  EXPECT_NE(error_of([&] { heads_graph().place_outputs_last({1, 4}); }).find("'a' is read by 'head'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { heads_graph().place_outputs_last({4, 4}); }).find("node 4 is not a distinct node"),
            std::string::npos);
}

TEST(GraphOutputs, JsonMarksSeveralAndOneOutputFilesAreUnchanged) {
  Graph g = heads_graph();
  const std::string one = g.to_json();
  EXPECT_EQ(one.find("\"output\""), std::string::npos) << "a graph of one output writes what it always wrote";
  g.place_outputs_last({g.find("c"), g.find("head")});
  const std::string two = g.to_json();
  const nlohmann::json j = nlohmann::json::parse(two);
  EXPECT_FALSE(j[2].contains("output"));
  EXPECT_TRUE(j[3].value("output", false) && j[4].value("output", false));
  const Graph back = Graph::from_json(two);
  EXPECT_EQ(back.output_count, 2);
  EXPECT_EQ(back.to_json(), two);
}

TEST(GraphOutputs, MisplacedOrReadOutputsAreRefused) {
  Graph g = heads_graph();
  g.place_outputs_last({g.find("c"), g.find("head")});
  nlohmann::json j = nlohmann::json::parse(g.to_json());
  j[2]["output"] = true, j[3].erase("output");  // an output before a node that is none
  EXPECT_NE(error_of([&] { Graph::from_json(j.dump()); }).find("graph node 3: follows an output"), std::string::npos);
  Graph read = heads_graph();
  read.output_count = 2;  // "b" is read by "c"
  EXPECT_NE(error_of([&] { read.validate(); }).find("graph output 'b' is read by 'c'"), std::string::npos);
  Graph all = heads_graph();
  all.output_count = static_cast<int>(all.nodes.size());
  EXPECT_NE(error_of([&] { all.validate(); }).find("graph has 5 outputs and 5 nodes"), std::string::npos);
}

QuantizedModel two_scale_model() {
  OpModel m(77);
  const int fine = m.conv(m.input(4, 10, 8), 8, 3, 1, 1, true);
  const int coarse = m.conv(fine, 12, 3, 2, 1, true);
  return m.finish_with_outputs({fine, m.global_avg_pool(coarse), coarse}, 3);
}

TEST(GraphOutputs, QuantizedModelRoundTripsAndRunsEachOutput) {
  const QuantizedModel saved = two_scale_model();
  const TempDir dir;
  const std::string path = dir.path("outputs.int8");
  save_quantized_model(saved, path);
  const QuantizedModel loaded = load_quantized_model(path);
  ASSERT_EQ(loaded.graph.output_count, 3);
  for (int o : loaded.graph.outputs()) EXPECT_EQ(loaded.quant[o].logit_scale.data, saved.quant[o].logit_scale.data);
  const int64_t batch = 5;
  std::vector<float> images(static_cast<size_t>(batch * 4 * 10 * 8));
  for (size_t k = 0; k < images.size(); ++k) images[k] = static_cast<float>(static_cast<int>(k * 37 % 255) - 128);
  const CpuEngine engine(loaded);
  const std::vector<Int32Tensor> outputs = engine.run_outputs(images.data(), batch);
  const ReferenceRun reference = reference_run(saved, images.data(), batch);
  ASSERT_EQ(outputs.size(), 3u);
  const std::vector<ActShape> shapes = loaded.graph.shapes();
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(outputs[k].shape, logits_shape(shapes[loaded.graph.first_output() + k], batch)) << k;
    EXPECT_EQ(outputs[k].data, reference.outputs[k].data) << k;
  }
  EXPECT_EQ(engine.run(images.data(), batch).data, outputs.back().data) << "run returns the last output";
  EXPECT_NE(error_of([&] { engine.run_nodes(images.data(), batch, 0, loaded.graph.first_output() + 1, {}); })
                .find("bad node range"),
            std::string::npos)
      << "a range that ends among the outputs";
}

}  // namespace
}  // namespace octet
