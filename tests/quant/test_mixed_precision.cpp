// Mixed precision (QuantizeOptions::float_nodes, NodeQuant::in_float): what the
// quantizer accepts and refuses, the file format, the summary of what runs in
// float, the CUDA backends' refusal, and, on real data, that float nodes bring
// the model closer to float. Bit-exactness against the oracle is the operator
// harness's (tests/ops/op_cases.cpp, network_mixed_*).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "common/error.h"
#include "common/safetensors.h"
#include "data/dataset.h"
#include "evaluate/evaluate.h"
#include "calibrate/calibrate.h"
#include "data/user_data.h"
#include "qmodel/precision.h"
#include "quant/accuracy_target.h"
#include "quant/pipeline.h"
#include "runtime/cpu/cpu_engine.h"
#include "runtime/cuda/op_support.h"
#include "tests/support/random_model.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

QuantizedModel random_lenet(const std::vector<std::string>& float_nodes) {
  QuantizeOptions options = quick_quantize_options();
  options.float_nodes = float_nodes;
  return quantize_random(random_checkpoint("lenet5", ModelOptions{1, 28, 28}, 3), options, 16);
}

TEST(MixedPrecision, NamedNodesKeepTheirFloatParametersAndNoIntegerOnes) {
  const QuantizedModel m = random_lenet({"conv2", "max_pool2d_6"});
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const NodeQuant& q = m.quant[i];
    const bool in_float = n.name == "conv2" || n.name == "max_pool2d_6";
    EXPECT_EQ(q.in_float, in_float) << n.name;
    EXPECT_GT(q.scale, i + 1 < m.graph.nodes.size() ? 0.0f : -1.0f) << n.name;  // its output is still int8
    if (n.name == "conv2") {
      EXPECT_EQ(q.float_weight.shape, (Shape{16, 6, 5, 5}));
      EXPECT_EQ(q.float_bias.shape, (Shape{16}));
      EXPECT_EQ(q.weight.numel(), 0);
      EXPECT_EQ(q.multiplier.numel(), 0);
    }
  }
  EXPECT_TRUE(m.mixed_precision());
  EXPECT_FALSE(random_lenet({}).mixed_precision());
}

TEST(MixedPrecision, RefusesUnknownNodesTheInputAndTheOutput) {
  const auto message = [](const std::vector<std::string>& names) { return error_of([&] { random_lenet(names); }); };
  EXPECT_NE(message({"conv9"}).find("no node 'conv9'"), std::string::npos) << message({"conv9"});
  EXPECT_NE(message({"input"}).find("'input' is the input"), std::string::npos) << message({"input"});
  EXPECT_NE(message({"fc3"}).find("'fc3' is the output"), std::string::npos) << message({"fc3"});
  EXPECT_NE(message({"relu_2"}).find("no node 'relu_2'"), std::string::npos);  // fused into conv1
}

TEST(MixedPrecision, FileKeepsFloatNodesAndAllInt8FilesKeepVersion2) {
  const TempDir temp;
  const std::string dir = temp.path();
  const QuantizedModel mixed = random_lenet({"conv2", "fc1"});
  save_quantized_model(mixed, dir + "/mixed.octet");
  const QuantizedModel back = load_quantized_model(dir + "/mixed.octet");
  for (size_t i = 0; i < mixed.quant.size(); ++i) {
    EXPECT_EQ(back.quant[i].in_float, mixed.quant[i].in_float);
    EXPECT_EQ(back.quant[i].float_weight.data, mixed.quant[i].float_weight.data);
    EXPECT_EQ(back.quant[i].float_bias.data, mixed.quant[i].float_bias.data);
  }
  EXPECT_EQ(TensorFile::load(dir + "/mixed.octet").meta("format_version"), "3");
  save_quantized_model(random_lenet({}), dir + "/int8.octet");
  EXPECT_EQ(TensorFile::load(dir + "/int8.octet").meta("format_version"), "2");

  QuantizedModel bad = mixed;
  bad.quant[mixed.graph.find("conv2")].float_weight.data[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(save_quantized_model(bad, dir + "/bad.octet"), Error);
  EXPECT_FALSE(file_exists(dir + "/bad.octet"));
}

TEST(MixedPrecision, SummaryCountsTheMacsOfFloatNodes) {
  const QuantizedModel m = random_lenet({"conv2"});
  const PrecisionSummary s = precision_summary(m);
  ASSERT_EQ(s.float_nodes.size(), 1u);
  // conv2: 16 x 10 x 10 outputs of 6 x 5 x 5 MACs, of lenet5's 416,520 per image.
  const double conv2 = 16.0 * 10 * 10 * 150, total = 416520;
  EXPECT_NEAR(s.float_nodes[0].mac_share, conv2 / total, 1e-9);
  EXPECT_NEAR(s.int8_mac_share, 1 - conv2 / total, 1e-9);
  EXPECT_NE(s.describe().find("in float: conv2 (conv2d, 57.6%)"), std::string::npos) << s.describe();
  EXPECT_EQ(precision_summary(random_lenet({})).describe(), "all int8");
}

TEST(MixedPrecision, CudaBackendsRefuseAFloatNodeByName) {
  const std::string why = cuda::why_model_unsupported(random_lenet({"fc1"}));
  EXPECT_NE(why.find("'fc1' (linear) in float"), std::string::npos) << why;
  EXPECT_EQ(cuda::why_model_unsupported(random_lenet({})), "");
}

// LeNet-5 on Fashion-MNIST (the zoo's), per-tensor weights: every node between
// the input and the last linear in float is one float segment, so only the
// input and fc2's output are rounded, and the logits come much closer to float's.
TEST(MixedPrecision, FloatNodesBringTheModelCloserToFloatOnRealData) {
  const std::string dir = fashion_mnist_dir();
  if (!path_exists(dir)) GTEST_SKIP() << "Fashion-MNIST is not installed (dataset-fashion-mnist)";
  const Checkpoint checkpoint = load_checkpoint(zoo_checkpoint("lenet5_fmnist"));
  QuantizeOptions options;
  options.method = AmaxMethod::Max;
  options.per_channel = false;
  const QuantizeResult int8 = quantize_checkpoint(checkpoint, dir, options, 256);
  options.float_nodes = {"conv1", "max_pool2d_3", "conv2", "max_pool2d_6", "flatten_7", "fc1", "fc2"};
  const QuantizeResult mixed = quantize_checkpoint(checkpoint, dir, options, 256);
  const Dataset test = load_dataset(checkpoint.dataset, dir, Split::Test);
  const FloatExecutor float_model(int8.folded);
  const EvalReport a = evaluate(float_model, CpuEngine(int8.model), test, 2000, true);
  const EvalReport b = evaluate(float_model, CpuEngine(mixed.model), test, 2000, true);
  std::printf("all int8: logits SQNR %.2f dB, agreement %.2f%%; %s: %.2f dB, %.2f%%\n", a.layers.back().sqnr_db,
              a.agreement, precision_summary(mixed.model).describe().c_str(), b.layers.back().sqnr_db, b.agreement);
  EXPECT_GT(b.layers.back().sqnr_db, a.layers.back().sqnr_db + 3);
  EXPECT_GE(b.agreement, a.agreement);
}

// The quantizer's auto search resumes runs from kept int8 outputs
// (CpuEngine::run_nodes): never from inside a float segment, whose values are
// not int8. From every resume point a run gives the whole run's bits.
TEST(MixedPrecision, RunsResumeOnlyWhereNoFloatSegmentValueIsPending) {
  const QuantizedModel m = random_lenet({"conv2", "max_pool2d_6", "fc1", "fc2"});  // two float segments
  const CpuEngine engine(m);
  const std::vector<float> images = random_images(2, m.graph.shapes()[0], 4);
  std::vector<std::vector<int8_t>> values(m.graph.nodes.size());
  const Int32Tensor whole = engine.run(images.data(), 2, [&](int node, const int8_t* v, int64_t count) {
    values[node].assign(v, v + count);
  });
  const int nodes = static_cast<int>(m.graph.nodes.size());
  const int pool = m.graph.find("max_pool2d_6"), fc2 = m.graph.find("fc2");
  EXPECT_EQ(engine.resume_point(pool), pool - 1);  // conv2's float value is read by the pool
  EXPECT_EQ(engine.resume_point(fc2), fc2 - 1);
  int resumable = 0;
  for (int first = 0; first < nodes; ++first) {
    const auto given = [&](int node) { return values[node].data(); };
    if (engine.resume_point(first) != first) {
      EXPECT_THROW(engine.run_nodes(images.data(), 2, first, nodes, given), Error) << first;
      continue;
    }
    ++resumable;
    EXPECT_EQ(engine.run_nodes(images.data(), 2, first, nodes, given).data, whole.data) << "from node " << first;
  }
  EXPECT_EQ(resumable, nodes - 2);
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

TEST(AccuracyTarget, ValidationImagesAreNeverCalibrationImages) {
  const std::vector<int64_t> calibration = calibration_indices(60000, 1024);
  const std::vector<int64_t> validation = validation_indices(60000, 1000, 1024);
  ASSERT_EQ(validation.size(), 1000u);
  for (int64_t v : validation) {
    EXPECT_FALSE(std::binary_search(calibration.begin(), calibration.end(), v)) << v;
    EXPECT_LT(v, 60000);
  }
  EXPECT_TRUE(std::is_sorted(validation.begin(), validation.end()));
  EXPECT_EQ(validation_indices(10, 100, 4).size(), 6u);  // what the calibration images leave
  EXPECT_THROW(validation_indices(4, 10, 4), Error);
}

// LeNet-5 on CIFAR-10 (the zoo's): a reachable target is met by keeping layers
// in float (validation agreement, never the test set's), a target no model
// meets gives the closest one found, and the search is deterministic.
TEST(AccuracyTarget, KeepsLayersInFloatUntilTheTargetHolds) {
  const std::string dir = cifar10_dir();
  if (dir.empty() || !path_exists(dir + "/test_batch.bin")) GTEST_SKIP() << "CIFAR-10 is not available";
  const Checkpoint checkpoint = load_checkpoint(zoo_checkpoint("lenet5_cifar10"));
  QuantizeOptions options;
  options.method = AmaxMethod::Max;
  options.per_channel = false;
  const QuantizeResult q = quantize_checkpoint(checkpoint, dir, options, 256);
  const Dataset validation = load_validation_images(
      model_input(checkpoint), DataOptions(dir), [](int64_t size) { return validation_indices(size, 500, 256); });
  ASSERT_EQ(validation.size(), 500);
  ASSERT_EQ(validation.labels.size(), 500u);

  AccuracyTarget reachable;
  reachable.min_agreement = 99.3;
  const TargetResult met = quantize_to_target(q.model, q.folded, validation, reachable);
  std::printf("all int8 %.2f%%, chosen %.2f%% with %zu float layers (%s)\n", met.all_int8.agreement,
              met.chosen.agreement, met.float_layers.size(), precision_summary(met.model).describe().c_str());
  ASSERT_LT(met.all_int8.agreement, 99.3);  // 99.0%
  EXPECT_TRUE(met.met);
  EXPECT_GE(met.chosen.agreement, 99.3);
  EXPECT_FALSE(met.float_layers.empty());
  EXPECT_LT(met.float_layers.size(), 4u);  // the search stops at the first model that meets it
  EXPECT_EQ(met.sensitivity.size(), 4u);  // conv1, conv2, fc1, fc2: not the output
  EXPECT_EQ(precision_summary(met.model).float_nodes.empty(), false);
  const TargetResult again = quantize_to_target(q.model, q.folded, validation, reachable);
  EXPECT_EQ(again.float_layers, met.float_layers);
  EXPECT_EQ(again.chosen.agreement, met.chosen.agreement);

  AccuracyTarget unreachable;
  unreachable.max_drop = 0;
  unreachable.min_agreement = 100;
  const TargetResult closest = quantize_to_target(q.model, q.folded, validation, unreachable);
  EXPECT_FALSE(closest.met);
  EXPECT_GE(closest.chosen.agreement, met.chosen.agreement);  // the best seen, not the last tried
}

}  // namespace
}  // namespace octet
