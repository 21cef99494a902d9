// Cross-layer equalization (quant/equalize.h) and bias correction
// (quant/bias_correction.h): what each promises, checked on the zoo's
// ResNet-20 with CIFAR-10 images and on a grouped/depthwise network.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "data/dataset.h"
#include "evaluate/evaluate.h"
#include "graph/op.h"
#include "models/checkpoint.h"
#include "quant/bias_correction.h"
#include "quant/equalize.h"
#include "quant/float_pass.h"
#include "quant/pipeline.h"
#include "runtime/cpu/cpu_engine.h"
#include "tests/support/random_model.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// Largest relative difference, over every pair, between output channel c's
// weight range in the first conv and input channel c's in the second.
double largest_imbalance(const FloatModel& m, const std::vector<EqualizedPair>& pairs) {
  double worst = 0;
  for (const EqualizedPair& p : pairs) {
    const Node& second = m.graph.nodes[m.graph.find(p.second)];
    const FloatTensor& w1 = m.params.at(p.first + ".weight");
    const FloatTensor& w2 = m.params.at(p.second + ".weight");
    const int64_t C = w1.dim(0), per1 = w1.numel() / C, in_per_group = w2.dim(1);
    const int64_t window = w2.numel() / (w2.dim(0) * in_per_group), out_per_group = w2.dim(0) / second.groups;
    std::vector<double> r1(C, 0), r2(C, 0);
    for (int64_t k = 0; k < w1.numel(); ++k) r1[k / per1] = std::max(r1[k / per1], std::abs(double(w1.data[k])));
    for (int64_t k = 0; k < w2.numel(); ++k) {
      const int64_t o = k / (in_per_group * window), j = (k / window) % in_per_group;
      const int64_t c = (o / out_per_group) * in_per_group + j;
      r2[c] = std::max(r2[c], std::abs(double(w2.data[k])));
    }
    for (int64_t c = 0; c < C; ++c) worst = std::max(worst, std::abs(r1[c] - r2[c]) / std::max(r1[c], r2[c]));
  }
  return worst;
}

double largest_difference(const FloatTensor& a, const FloatTensor& b) {
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) d = std::max(d, std::abs(double(a.data[i]) - b.data[i]));
  return d;
}

double largest_value(const FloatTensor& a) {
  double m = 0;
  for (float v : a.data) m = std::max(m, std::abs(double(v)));
  return m;
}

TEST(Equalization, KeepsResNet20sFunctionAndBalancesEveryPair) {
  const std::string dir = cifar10_dir();
  if (dir.empty()) GTEST_SKIP() << "CIFAR-10 is not written (OCTET_CIFAR10_DIR; tools/setup.sh writes it)";
  const Checkpoint checkpoint = load_checkpoint(zoo_checkpoint("resnet20_cifar10"));
  const FloatModel folded = fold_for_inference(checkpoint.graph, checkpoint.params);
  const Equalization e = equalize_cross_layer(folded);
  EXPECT_EQ(e.pairs.size(), 9u);  // each basic block's conv1 -> conv2
  EXPECT_EQ(e.pairs[0].first, "layer1.0.conv1");
  EXPECT_EQ(e.pairs[0].second, "layer1.0.conv2");
  EXPECT_GT(largest_imbalance(folded, e.pairs), 0.5);
  EXPECT_LT(largest_imbalance(e.model, e.pairs), 1e-3);

  const Dataset test = load_dataset(checkpoint.dataset, dir, Split::Test);
  const std::vector<float> images = normalized_images(test, checkpoint.mean, checkpoint.std, 0, 64);
  const FloatTensor before = FloatExecutor(folded).run(images.data(), 64);
  const FloatTensor after = FloatExecutor(e.model).run(images.data(), 64);
  EXPECT_LT(largest_difference(before, after), 1e-4 * largest_value(before));

  const Equalization again = equalize_cross_layer(folded);
  for (const auto& [name, tensor] : e.model.params) EXPECT_EQ(again.model.params.at(name).data, tensor.data) << name;
}

// Grouped -> depthwise -> pointwise, as in an inverted residual; a ReLU6 between
// the grouped conv and the depthwise one becomes ReLU.
TEST(Equalization, ScalesGroupedAndDepthwiseChannelsAndTurnsReLU6IntoReLU) {
  const Checkpoint c = random_grouped_checkpoint(5);
  FloatModel folded = fold_for_inference(c.graph, c.params);
  Node& gc = folded.graph.nodes[folded.graph.find("gc")];
  ASSERT_TRUE(gc.relu);
  gc.relu_max = 6;
  const Equalization e = equalize_cross_layer(folded);
  ASSERT_EQ(e.pairs.size(), 3u);
  EXPECT_EQ(e.pairs[0].first + ">" + e.pairs[0].second, "stem>dw");  // dw's output has two readers: no pair
  EXPECT_EQ(e.pairs[1].first + ">" + e.pairs[1].second, "gc>dw5");
  EXPECT_EQ(e.pairs[2].first + ">" + e.pairs[2].second, "dw5>project");
  EXPECT_TRUE(e.pairs[1].relu6_became_relu);
  EXPECT_FALSE(e.pairs[0].relu6_became_relu);
  EXPECT_EQ(e.model.graph.nodes[e.model.graph.find("gc")].relu_max, 0.0f);
  EXPECT_LT(largest_imbalance(e.model, e.pairs), 1e-3);

  FloatModel as_relu = folded;
  as_relu.graph.nodes[as_relu.graph.find("gc")].relu_max = 0;
  const std::vector<float> images = random_images(8, folded.graph.shapes()[0], 3);
  const FloatTensor before = FloatExecutor(as_relu).run(images.data(), 8);
  const FloatTensor after = FloatExecutor(e.model).run(images.data(), 8);
  EXPECT_LT(largest_difference(before, after), 1e-4 * largest_value(before));
}

// Each channel's mean of node `name`'s output before its fused ReLU, over the
// images and positions (activations are NHWC: graph/layout.h), run by the
// float executor.
std::vector<double> output_means(FloatModel model, const std::string& name, const std::vector<float>& images,
                                 int64_t count) {
  const int node = model.graph.find(name);
  model.graph.nodes[node].relu = false;
  model.graph.nodes[node].relu_max = 0;
  const FloatExecutor executor(model);
  const int64_t C = executor.shapes()[node].c;
  std::vector<double> sums(C, 0.0);
  double per_channel = 0;
  executor.run(images.data(), count, [&](int i, const FloatTensor& v) {
    if (i != node) return;
    for (int64_t k = 0; k < v.numel(); ++k) sums[k % C] += v.data[k];
    per_channel += double(v.numel()) / double(C);
  });
  for (double& m : sums) m /= per_channel;
  return sums;
}

// `model` with layer `name` running its int8 weights (dequantized) and `bias`.
FloatModel with_int8_weights(const FloatModel& model, const std::string& name, const QuantizedWeights& q,
                             const FloatTensor& bias) {
  FloatModel m = model;
  FloatTensor& w = m.params.at(name + ".weight");
  const int64_t per = w.numel() / w.dim(0);
  for (int64_t k = 0; k < w.numel(); ++k) w.data[k] = float(q.values.data[k]) / q.scales.data[k / per];
  m.params.at(name + ".bias") = bias;
  return m;
}

// For a 1 x 1 conv or a linear, the mean output over the calibration images is
// the float layer's after correction: the int8 weights' rounding moves it, the
// corrected bias moves it back. A k x k conv reads its input's borders less
// often than its centre, so there the correction is close, not exact (LeNet's
// conv2, 5 x 5 without padding). LeNet's fc1 reads a flattened 16 x 5 x 5
// tensor: the weights' and the means' feature orders must agree.
TEST(BiasCorrection, RemovesTheMeanShiftOfRoundedWeights) {
  struct Case {
    Checkpoint checkpoint;
    std::vector<std::pair<std::string, double>> layers;  // and the share of the shift left; the last is kept
  };
  const Case cases[] = {{random_grouped_checkpoint(7), {{"project", 1e-3}, {"fc", 0}}},
                        {random_checkpoint("lenet5", ModelOptions{1, 28, 28}, 4),
                         {{"conv2", 0.1}, {"fc1", 1e-3}, {"fc2", 0}}}};
  for (const Case& c : cases) {
    const FloatModel folded = fold_for_inference(c.checkpoint.graph, c.checkpoint.params);
    const FloatExecutor executor(folded);
    const int64_t count = 32;
    const std::vector<float> images = random_images(count, executor.shapes()[0], 9);
    FloatPassRecord record(executor, 0, 0, count);
    record.run(executor, images);
    std::map<std::string, QuantizedWeights> weights;
    for (const Node& n : folded.graph.nodes)
      if (op_traits(n.op).weighted) weights[n.name] = quantize_weights(folded.weight(n), false, false, n.name);
    const std::string kept = c.layers.back().first;
    const FloatModel corrected = correct_biases(folded, weights, record.channel_means(), {kept});
    EXPECT_EQ(corrected.params.at(kept + ".bias").data, folded.params.at(kept + ".bias").data);  // kept in float

    for (size_t l = 0; l + 1 < c.layers.size(); ++l) {
      const std::string& name = c.layers[l].first;  // a named reference: C++17 lambdas cannot capture bindings
      const double left = c.layers[l].second;
      const std::vector<double> float_means = output_means(folded, name, images, count);
      const auto largest_shift = [&](const FloatTensor& bias) {
        const std::vector<double> means =
            output_means(with_int8_weights(folded, name, weights.at(name), bias), name, images, count);
        double worst = 0;
        for (size_t k = 0; k < means.size(); ++k) worst = std::max(worst, std::abs(means[k] - float_means[k]));
        return worst;
      };
      const double before = largest_shift(folded.params.at(name + ".bias"));
      const double after = largest_shift(corrected.params.at(name + ".bias"));
      EXPECT_GT(before, 1e-4) << name;
      EXPECT_LT(after, left * before) << name;
    }
  }
}

// An equalized model says so in its file, and its layers compare with the
// float model it was quantized from: against the checkpoint's own, the first
// conv of each pair would be off by its channels' scales.
TEST(Equalization, EvaluationComparesLayersWithTheEqualizedFloatModel) {
  const std::string dir = cifar10_dir();
  if (dir.empty()) GTEST_SKIP() << "CIFAR-10 is not written (OCTET_CIFAR10_DIR; tools/setup.sh writes it)";
  const Checkpoint checkpoint = load_checkpoint(zoo_checkpoint("resnet20_cifar10"));
  QuantizeOptions options = quick_quantize_options();
  options.per_channel = false;
  options.equalize = true;
  const QuantizeResult r = quantize_checkpoint(checkpoint, dir, options, 128);
  const std::string path = testing::TempDir() + "/equalized.int8.octet";
  save_quantized_model(r.model, path);
  const QuantizedModel loaded = load_quantized_model(path);
  std::remove(path.c_str());
  EXPECT_TRUE(loaded.equalized);
  EXPECT_FALSE(loaded.bias_corrected);

  const FloatModel folded = fold_for_inference(checkpoint.graph, checkpoint.params);
  const std::optional<FloatModel> reference = equalized_reference(folded, loaded);
  ASSERT_TRUE(reference.has_value());
  const Dataset test = load_dataset(checkpoint.dataset, dir, Split::Test);
  const CpuEngine engine(loaded);
  const FloatExecutor as_quantized(*reference), original(folded);
  const EvalReport right = evaluate(original, engine, test, 200, true, 100, &as_quantized);
  const EvalReport wrong = evaluate(original, engine, test, 200, true, 100);
  EXPECT_EQ(right.agreement, wrong.agreement);  // the logits compare with the checkpoint's either way
  const auto sqnr_of = [](const EvalReport& e, const std::string& name) {
    for (const LayerReport& l : e.layers)
      if (l.name == name) return l.sqnr_db;
    return -1.0;
  };
  EXPECT_GT(sqnr_of(right, "layer1.0.conv1"), 20);
  EXPECT_LT(sqnr_of(wrong, "layer1.0.conv1"), sqnr_of(right, "layer1.0.conv1") - 10);
}

}  // namespace
}  // namespace octet
