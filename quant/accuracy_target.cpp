#include "quant/accuracy_target.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "calibrate/calibrate.h"
#include "common/error.h"
#include "common/progress.h"
#include "graph/float_executor.h"
#include "graph/op.h"
#include "qmodel/precision.h"
#include "runtime/cpu/cpu_engine.h"

namespace octet {

namespace {
constexpr int64_t kBatch = 250;

// Scores models on the validation images against the float model's predictions, made once.
class ValidationScorer {
 public:
  ValidationScorer(const FloatModel& folded, const Dataset& validation, const std::vector<float>& mean,
                   const std::vector<float>& std)
      : images_(normalized_images(validation, mean, std, 0, validation.size())),
        labels_(validation.labels),
        count_(validation.size()),
        per_image_(validation.image_numel()) {
    check(count_ > 0, "the validation split has no images");
    const FloatExecutor executor(folded);
    float_classes_ = predict([&](const float* x, int64_t n) { return executor.run(x, n); });
    check(labels_.empty() || static_cast<int64_t>(float_classes_.size()) == count_,
          validation.name + ": its labels name a class per image, and the model returns an image of logits");
    for (int64_t i = 0; i < count_ && !labels_.empty(); ++i) float_correct_ += float_classes_[i] == labels_[i];
  }

  bool labelled() const { return !labels_.empty(); }
  int64_t count() const { return count_; }

  ValidationScore score(const QuantizedModel& model) const {
    const CpuEngine engine(model);
    const std::vector<int> classes =
        predict([&](const float* x, int64_t n) { return engine.dequantize_logits(engine.run(x, n)); });
    int64_t agree = 0, correct = 0;
    for (size_t i = 0; i < classes.size(); ++i) {  // per image, or per pixel of an image of logits
      agree += classes[i] == float_classes_[i];
      if (labelled()) correct += classes[i] == labels_[i];
    }
    ValidationScore s;
    s.agreement = 100.0 * double(agree) / double(classes.size());
    if (labelled()) {
      s.float_top1 = 100.0 * double(float_correct_) / double(count_);
      s.top1 = 100.0 * double(correct) / double(count_);
    }
    return s;
  }

 private:
  template <typename Run>
  std::vector<int> predict(Run run) const {
    std::vector<int> classes;
    for (int64_t first = 0; first < count_; first += kBatch) {
      const int64_t n = std::min(kBatch, count_ - first);
      const FloatTensor logits = run(images_.data() + first * per_image_, n);
      const int64_t width = logits.shape.back();  // a row: an image's logits, or a pixel's
      for (int64_t r = 0; r < logits.numel() / width; ++r) {
        const float* row = logits.ptr() + r * width;
        classes.push_back(static_cast<int>(std::max_element(row, row + width) - row));
      }
    }
    return classes;
  }

  std::vector<float> images_;
  std::vector<int32_t> labels_;
  int64_t count_, per_image_;
  std::vector<int> float_classes_;
  int64_t float_correct_ = 0;
};

// `int8` with the flagged nodes kept in float, and with them every node that
// only moves or pools values between float nodes (all its inputs and readers
// float), so that float segments are not cut by a max pool or a flatten.
QuantizedModel with_float_nodes(const QuantizedModel& int8, const FloatModel& folded, std::vector<bool> flags) {
  const Graph& g = int8.graph;
  const std::vector<std::vector<int>> consumers = g.consumers();
  const int output = int8.output();
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 1; i < output; ++i) {
      if (flags[i] || op_traits(g.nodes[i].op).weighted) continue;
      bool inside = !consumers[i].empty();
      for (int in : g.nodes[i].inputs) inside = inside && flags[in];
      for (int c : consumers[i]) inside = inside && flags[c];
      if (inside) flags[i] = grew = true;
    }
  }
  QuantizedModel m = int8;
  for (int i = 0; i < static_cast<int>(flags.size()); ++i) {
    if (!flags[i]) continue;
    const Node& n = g.nodes[i];
    NodeQuant& q = m.quant[i];
    const float scale = q.scale, amax = q.amax;
    const int32_t zero_point = q.zero_point;
    const std::string method = q.method;
    q = NodeQuant();
    q.scale = scale, q.amax = amax, q.method = method, q.zero_point = zero_point;
    q.in_float = true;
    if (op_traits(n.op).weighted) q.float_weight = folded.weight(n), q.float_bias = folded.bias(n);
    if (n.op == Op::PRelu) q.slope = folded.weight(n);
    if (n.op == Op::GroupNorm && n.bias) q.norm_scale = folded.weight(n), q.norm_shift = folded.bias(n);
  }
  return m;
}

// The weighted nodes that may run in float: all but the output.
std::vector<int> float_candidates(const QuantizedModel& int8) {
  std::vector<int> layers;
  for (int i = 1; i < int8.output(); ++i)
    if (op_traits(int8.graph.nodes[i].op).weighted) layers.push_back(i);
  return layers;
}

std::vector<LayerSensitivity> sensitivity_of(const QuantizedModel& int8, const FloatModel& folded,
                                             const ValidationScorer& scorer, Progress* progress) {
  const Graph& g = int8.graph;
  const int nodes = static_cast<int>(g.nodes.size());
  const std::vector<int> layers = float_candidates(int8);
  const std::vector<double> shares = mac_shares(int8);
  std::vector<LayerSensitivity> out;
  for (int i : layers) {
    std::vector<bool> only(nodes, false), all_but(nodes, false);
    only[i] = true;
    for (int j : layers) all_but[j] = j != i;
    out.push_back({g.nodes[i].name, op_name(g.nodes[i].op), shares[i],
                   scorer.score(with_float_nodes(int8, folded, only)).agreement,
                   scorer.score(with_float_nodes(int8, folded, all_but)).agreement});
    if (progress) progress->advance();
  }
  return out;
}

bool meets(const ValidationScore& s, const AccuracyTarget& t) {
  return (t.min_agreement < 0 || s.agreement >= t.min_agreement) &&
         (t.max_drop < 0 || s.top1 >= s.float_top1 - t.max_drop);
}

// Agreement is of one output's predictions.
void check_one_output(const QuantizedModel& int8, const std::string& what) {
  check(int8.graph.output_count == 1, what + " scores the agreement of one output's predictions, and the model has " +
                                          std::to_string(int8.graph.output_count) + " outputs");
  check(!has_output_views(int8.graph), what + " scores the agreement of predicted classes, and the model returns a "
                                              "detection head's rows");
}

}  // namespace

nlohmann::json sensitivity_json(const std::vector<LayerSensitivity>& layers) {
  nlohmann::json rows = nlohmann::json::array();
  for (const LayerSensitivity& l : layers)
    rows.push_back({{"name", l.name}, {"op", l.op}, {"mac_share", l.mac_share},
                    {"agreement_only_it_float", l.only_it_float}, {"agreement_only_it_int8", l.only_it_int8}});
  return rows;
}

nlohmann::json target_json(const TargetResult& t, const AccuracyTarget& target) {
  const auto score = [](const ValidationScore& s) {
    return nlohmann::json{{"agreement", s.agreement}, {"float_top1", s.float_top1}, {"int8_top1", s.top1}};
  };
  const nlohmann::json layers = sensitivity_json(t.sensitivity);
  return {{"min_agreement", target.min_agreement}, {"max_drop", target.max_drop}, {"met", t.met},
          {"validation_images", t.validation_images}, {"all_int8", score(t.all_int8)},
          {"chosen", score(t.chosen)}, {"float_layers", t.float_layers}, {"sensitivity", layers}};
}

std::vector<int64_t> validation_indices(int64_t size, int64_t samples, int64_t calibration) {
  check(samples > 0, "the validation split is empty (--val-samples must be positive)");
  const std::vector<int64_t> taken = calibration_indices(size, calibration);
  const std::set<int64_t> calibration_set(taken.begin(), taken.end());
  samples = std::min(samples, size - static_cast<int64_t>(calibration_set.size()));
  check(samples > 0, "the training split has no image left for validation beside the calibration images");
  std::vector<int64_t> indices;
  std::set<int64_t> used;
  for (int64_t i = 0; i < samples; ++i) {
    int64_t index = (2 * i + 1) * size / (2 * samples);
    while (index < size && (calibration_set.count(index) || used.count(index))) ++index;
    if (index < size) indices.push_back(index), used.insert(index);
  }
  return indices;
}

std::vector<LayerSensitivity> layer_sensitivity(const QuantizedModel& int8, const FloatModel& folded,
                                                const Dataset& validation, Progress* progress) {
  check_one_output(int8, "the layer sensitivity");
  return sensitivity_of(int8, folded, ValidationScorer(folded, validation, int8.mean, int8.std), progress);
}

TargetResult quantize_to_target(const QuantizedModel& int8, const FloatModel& folded, const Dataset& validation,
                                const AccuracyTarget& target, bool always_measure_sensitivity) {
  check(target.set(), "no accuracy target given (--min-agreement or --max-drop)");
  check_one_output(int8, "an accuracy target (--min-agreement, --max-drop)");
  check(target.min_agreement <= 100, "--min-agreement is a percentage: at most 100");
  const ValidationScorer scorer(folded, validation, int8.mean, int8.std);
  check(target.max_drop < 0 || scorer.labelled(),
        "--max-drop compares top-1 with float's, which needs labelled calibration images (--min-agreement does not)");
  const Graph& g = int8.graph;
  const int nodes = static_cast<int>(g.nodes.size());
  const std::vector<int> layers = float_candidates(int8);

  TargetResult r;
  r.validation_images = scorer.count();
  r.all_int8 = scorer.score(int8);
  r.model = int8;
  r.chosen = r.all_int8;
  if ((r.met = meets(r.all_int8, target)) && !always_measure_sensitivity) return r;

  Progress progress(r.met ? "accuracy target: per-layer sensitivity"
                          : "accuracy target: per-layer sensitivity, then float layers",
                    (r.met ? 1 : 2) * int64_t(layers.size()));
  r.sensitivity = sensitivity_of(int8, folded, scorer, &progress);
  if (r.met) {  // by the all-int8 model
    progress.finish();
    return r;
  }
  // Most to gain alone in float first, then least agreement alone in int8, then fewest MACs.
  std::vector<size_t> order(layers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const LayerSensitivity &x = r.sensitivity[a], &y = r.sensitivity[b];
    if (x.only_it_float != y.only_it_float) return x.only_it_float > y.only_it_float;
    if (x.only_it_int8 != y.only_it_int8) return x.only_it_int8 < y.only_it_int8;
    return x.mac_share < y.mac_share;
  });
  std::vector<bool> flags(nodes, false);
  std::vector<std::string> chosen;
  for (size_t k : order) {
    flags[layers[k]] = true;
    chosen.push_back(g.nodes[layers[k]].name);
    QuantizedModel candidate = with_float_nodes(int8, folded, flags);
    const ValidationScore s = scorer.score(candidate);
    progress.advance();
    if (s.agreement > r.chosen.agreement || meets(s, target)) {
      r.model = std::move(candidate);
      r.chosen = s;
      r.float_layers = chosen;
    }
    if ((r.met = meets(s, target))) break;
  }
  progress.finish();
  return r;
}

}  // namespace octet
