// The calibration report's figures on the LeNet-5 Fashion-MNIST zoo model: every
// layer is there, the recorded amax is recovered from a fresh calibration, the
// method figures follow from the histograms, the weight ranges match the
// scales, and the page holds every layer and nothing external.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "graph/op_traits.h"
#include "data/user_data.h"
#include "quant/accuracy_target.h"
#include "report/advice.h"
#include "report/data.h"
#include "report/figures.h"
#include "report/html_page.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

constexpr int64_t kCalibration = 256, kTestImages = 300;

struct Quantized {
  Checkpoint checkpoint;
  QuantizeResult result;
  CalibrationReport report;
};

// The loader reads the IDX files raw or gzipped (Debian ships them gzipped).
bool data_available() {
  const std::string labels = fashion_mnist_dir() + "/t10k-labels-idx1-ubyte";
  return path_exists(labels) || path_exists(labels + ".gz");
}

// LeNet-5 quantized once per option set for the whole suite.
const Quantized& quantized(bool per_channel) {
  static std::unique_ptr<Quantized> cache[2];
  std::unique_ptr<Quantized>& q = cache[per_channel];
  if (!q) {
    q = std::make_unique<Quantized>();
    q->checkpoint = load_checkpoint(zoo_checkpoint("lenet5_fmnist"));
    QuantizeOptions options;
    options.per_channel = per_channel;
    options.auto_samples = 64;
    options.weight_rounding = "nearest";
    q->result = quantize_checkpoint(q->checkpoint, fashion_mnist_dir(), options, kCalibration);
    q->report = build_calibration_report(q->checkpoint, q->result.folded, q->result.calibration, q->result.model,
                                         fashion_mnist_dir(), kTestImages, options.percentile);
  }
  return *q;
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!data_available())
      GTEST_SKIP() << "Fashion-MNIST is not in " << fashion_mnist_dir() << " (tools/setup.sh installs it)";
  }
};

TEST_F(Report, HasEveryScaledOrWeightedLayerInGraphOrder) {
  const Quantized& q = quantized(true);
  const QuantizedModel& m = q.result.model;
  std::vector<std::string> expected;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const bool scaled = op_traits(n.op).owns_scale && static_cast<int>(i) != m.output();
    if (scaled || op_traits(n.op).weighted) expected.push_back(n.name);
  }
  std::vector<std::string> names;
  std::set<std::string> ids;
  for (const LayerView& l : q.report.layers) {
    names.push_back(l.name);
    ids.insert(l.id);
    const int i = m.graph.find(l.name);
    ASSERT_GE(i, 0) << l.name;
    EXPECT_EQ(l.weights.has_value(), op_traits(m.graph.nodes[i].op).weighted) << l.name;
    EXPECT_EQ(l.activation.has_value(), i != m.output()) << l.name;
    EXPECT_FALSE(std::isnan(l.sqnr_db)) << l.name << " has no measured SQNR";
    // Two noise sources cost more than either alone.
    if (l.activation) {
      EXPECT_LE(l.alone_db, l.activation->chosen.sqnr_db) << l.name;
    }
    if (l.weights) {
      EXPECT_LE(l.alone_db, l.weights->sqnr_db) << l.name;
    }
  }
  EXPECT_EQ(names, expected);
  EXPECT_EQ(ids.size(), names.size()) << "HTML anchors must be unique";
  EXPECT_EQ(q.report.eval.images, kTestImages);
  EXPECT_GT(q.report.eval.agreement, 90.0);
}

// The histograms shown are the ones the scales came from: the recorded amax is
// the chosen method's amax on a fresh calibration of the saved model.
TEST_F(Report, FreshCalibrationRecoversTheRecordedAmax) {
  const Quantized& q = quantized(true);
  TempDir dir;
  save_quantized_model(q.result.model, dir.path("lenet5.int8.octet"));
  const QuantizedModel loaded = load_quantized_model(dir.path("lenet5.int8.octet"));
  const Calibration again = recalibrate(q.checkpoint, q.result.folded, loaded, fashion_mnist_dir());
  const CalibrationReport r =
      build_calibration_report(q.checkpoint, q.result.folded, again, loaded, fashion_mnist_dir(), 100, 99.99);
  int checked = 0;
  for (const LayerView& l : r.layers) {
    if (!l.activation) continue;
    const auto& a = *l.activation;
    const auto it = std::find_if(a.methods.begin(), a.methods.end(),
                                 [&](const MethodChoice& m) { return m.method == a.chosen_method; });
    ASSERT_NE(it, a.methods.end()) << l.name << ": chosen method " << a.chosen_method;
    EXPECT_NEAR(it->amax, a.chosen_amax, 1e-6 * a.chosen_amax) << l.name;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST_F(Report, MethodFiguresFollowFromTheHistogram) {
  for (const LayerView& l : quantized(true).report.layers) {
    if (!l.activation) continue;
    const ActivationView& a = *l.activation;
    ASSERT_EQ(a.methods.size(), statistic_methods().size());
    const MethodChoice& max = a.methods.front();
    ASSERT_EQ(max.method, "max");
    EXPECT_NEAR(max.amax, std::max(std::abs(a.min), std::abs(a.max)), 1e-9) << l.name;
    EXPECT_EQ(max.clipped_share, 0.0) << l.name;
    EXPECT_GT(max.sqnr_db, 10.0) << l.name;
    std::vector<MethodChoice> by_amax = a.methods;
    std::sort(by_amax.begin(), by_amax.end(), [](const auto& x, const auto& y) { return x.amax < y.amax; });
    for (size_t k = 1; k < by_amax.size(); ++k)
      EXPECT_LE(by_amax[k].clipped_share, by_amax[k - 1].clipped_share) << l.name << ": a larger amax clips less";
    const auto percentile = std::find_if(a.methods.begin(), a.methods.end(),
                                         [](const MethodChoice& m) { return m.method == "percentile"; });
    // 99.99th percentile of |x|, to the histogram's bin.
    EXPECT_LE(percentile->clipped_share, 1e-4 + 1e-3) << l.name;
  }
}

TEST_F(Report, WeightRangesMatchTheScalesUsed) {
  for (bool per_channel : {true, false}) {
    for (const LayerView& l : quantized(per_channel).report.layers) {
      if (!l.weights) continue;
      const WeightView& w = *l.weights;
      ASSERT_EQ(w.channel_amax.size(), w.used_amax.size());
      const float widest = *std::max_element(w.channel_amax.begin(), w.channel_amax.end());
      for (size_t c = 0; c < w.channel_amax.size(); ++c) {
        const float expected = per_channel ? w.channel_amax[c] : widest;
        EXPECT_NEAR(w.used_amax[c], expected, 1e-5 * expected) << l.name << " channel " << c;
      }
      EXPECT_GT(w.sqnr_db, 25.0) << l.name;
    }
  }
  // Per-tensor scales give the narrow channels fewer levels.
  const auto conv1 = [](const Quantized& q) {
    return std::find_if(q.report.layers.begin(), q.report.layers.end(),
                        [](const LayerView& l) { return l.name == "conv1"; });
  };
  EXPECT_GT(conv1(quantized(true))->weights->sqnr_db, conv1(quantized(false))->weights->sqnr_db);
}

TEST_F(Report, WorstLayersFirstAndOnlyTheyGetAdvice) {
  const CalibrationReport& r = quantized(true).report;
  const std::vector<const LayerView*> order = worst_first(r);
  ASSERT_EQ(order.size(), r.layers.size());
  for (size_t k = 1; k < order.size(); ++k) EXPECT_LE(order[k - 1]->sqnr_db, order[k]->sqnr_db);
  for (size_t k = 0; k < order.size(); ++k)
    EXPECT_EQ(!order[k]->advice.empty(), k < 3) << order[k]->name << " (rank " << k + 1 << ")";
}

TEST_F(Report, PageHoldsEveryLayerAndNothingExternal) {
  const CalibrationReport& r = quantized(true).report;
  const std::string html = calibration_report_html(r);
  for (const LayerView& l : r.layers) {
    EXPECT_NE(html.find("<article class=\"layer\" id=\"" + l.id + "\">"), std::string::npos) << l.name;
    EXPECT_NE(html.find("href=\"#" + l.id + "\""), std::string::npos) << l.name << " is not linked";
  }
  for (const char* external : {"<script", "<link", "src=", "http:", "https:", "url("})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_NE(html.find("chosen: "), std::string::npos);
  EXPECT_EQ(html_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
}

// A chain of weight-only layers with given costs alone; the last measures `last_db`.
CalibrationReport chain(const std::vector<double>& alone_db, double last_db) {
  CalibrationReport r;
  r.granularity = "per-channel";
  r.weight_rounding = "gptq";
  for (size_t k = 0; k < alone_db.size(); ++k) {
    LayerView l;
    l.name = "layer" + std::to_string(k);
    l.weights = WeightView{{1.0f, 1.0f}, {1.0f, 1.0f}, alone_db[k]};
    l.alone_db = alone_db[k];
    l.sqnr_db = k + 1 == alone_db.size() ? last_db : alone_db[k];
    r.layers.push_back(l);
  }
  return r;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST(ReportAdvice, NamesTheLayerAboveThatCostsMostWhenErrorIsCarriedIn) {
  const CalibrationReport r = chain({40, 25, 41, 39, 40}, 20);
  const std::string advice = joined(advice_for(r.layers.back(), r));
  EXPECT_NE(advice.find("carried in from the 4 layers before it"), std::string::npos) << advice;
  EXPECT_NE(advice.find("layer1 (25.0 dB alone)"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("layer0"), std::string::npos) << advice;
}

TEST(ReportAdvice, SaysWhenNoLayerAboveStandsOut) {
  const CalibrationReport r = chain({40, 39, 41, 39, 40}, 25);
  const std::string advice = joined(advice_for(r.layers.back(), r));
  EXPECT_NE(advice.find("None of them stands out (39.0 to 41.0 dB alone)"), std::string::npos) << advice;
}

TEST(ReportAdvice, PointsPerTensorWeightsWithWideChannelsToPerChannel) {
  CalibrationReport r = chain({30}, 30);
  r.granularity = "per-tensor";
  r.layers[0].weights->channel_amax = {2.0f, 0.1f};
  const std::string advice = joined(advice_for(r.layers[0], r));
  EXPECT_NE(advice.find("span 20x"), std::string::npos) << advice;
  EXPECT_NE(advice.find("--granularity per-channel"), std::string::npos) << advice;
}

TEST(ReportAdvice, SaysWhatTheAutoMethodsWeighedAgainstATensorsOwnBest) {
  CalibrationReport r = chain({30}, 30);
  ActivationView a;
  a.methods = {{"max", 4.0, 0.0, 28.0}, {"percentile", 2.0, 1e-4, 35.0}};
  a.chosen_method = "max";
  a.chosen_amax = 4.0;
  a.chosen = a.methods[0];
  r.layers[0].activation = a;
  const auto advice_under = [&](const std::string& method) {
    r.method = method;
    return joined(advice_for(r.layers[0], r));
  };
  EXPECT_NE(advice_under("max").find("try `octet quantize --method percentile`"), std::string::npos);
  EXPECT_NE(advice_under("auto").find("auto kept max"), std::string::npos);
  const std::string global = advice_under("auto-global");
  EXPECT_NE(global.find("auto-global gave every tensor max's amax"), std::string::npos) << global;
  EXPECT_NE(global.find("`--method auto`"), std::string::npos) << global;
}

TEST(ReportInputs, RefusesAQuantizedModelOfAnotherCheckpoint) {
  const Checkpoint lenet_cifar = load_checkpoint(zoo_checkpoint("lenet5_cifar10"));
  QuantizedModel other;
  other.model = "lenet5";
  other.dataset = "fashion-mnist";
  const std::string message = error_of([&] {
    build_calibration_report(lenet_cifar, fold_for_inference(lenet_cifar.graph, lenet_cifar.params), Calibration{},
                             other, DataOptions(), 10, 99.99);
  });
  EXPECT_NE(message.find("pass the checkpoint it was quantized from"), std::string::npos) << message;
}

// An accuracy target's search in the report: every weighted layer but the
// output has its sensitivity, even where all int8 already meets the goal; a
// goal all int8 misses keeps layers in float, and the report is of that mixed
// model: its float layers are marked and show no int8 weights.
TEST_F(Report, AccuracyTargetShowsEveryLayersSensitivityAndTheDecision) {
  const Quantized& q = quantized(true);
  const Dataset validation =
      load_validation_images(model_input(q.checkpoint), fashion_mnist_dir(),
                             [](int64_t size) { return validation_indices(size, 200, kCalibration); });
  AccuracyTarget easy;
  easy.min_agreement = 0;
  CalibrationReport met = q.report;
  met.target = quantize_to_target(q.result.model, q.result.folded, validation, easy, true);
  met.goal = easy;
  ASSERT_TRUE(met.target->met);
  std::vector<std::string> names;
  for (const LayerSensitivity& l : met.target->sensitivity) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv1", "conv2", "fc1", "fc2"}));
  const std::string page = calibration_report_html(met);
  EXPECT_NE(page.find("id=\"accuracy-target\""), std::string::npos);
  EXPECT_NE(page.find("met with every layer in int8"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(calibration_report_json(met))["accuracy_target"]["sensitivity"].size(), 4u);
  EXPECT_EQ(calibration_report_html(q.report).find("id=\"accuracy-target\""), std::string::npos);

  AccuracyTarget unreachable;
  unreachable.min_agreement = 100;  // never met on LeNet-5: layers end in float
  const TargetResult missed = quantize_to_target(q.result.model, q.result.folded, validation, unreachable);
  ASSERT_FALSE(missed.float_layers.empty());
  CalibrationReport mixed = build_calibration_report(q.checkpoint, q.result.folded, q.result.calibration, missed.model,
                                                     fashion_mnist_dir(), kTestImages, 99.99);
  for (const LayerView& l : mixed.layers) {
    const bool kept = std::count(missed.float_layers.begin(), missed.float_layers.end(), l.name) > 0;
    EXPECT_EQ(l.in_float, kept) << l.name;
    if (kept) {
      EXPECT_FALSE(l.weights.has_value()) << l.name;
    }
  }
  EXPECT_NE(calibration_report_html(mixed).find("runs in float"), std::string::npos);
}

}  // namespace
}  // namespace octet
