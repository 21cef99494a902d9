#include "report/data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/op_traits.h"
#include "report/advice.h"

namespace octet {

namespace {
double sqnr_db(double signal, double noise) {
  if (noise == 0) return INFINITY;
  return 10.0 * std::log10(signal / noise);
}

// Quantizes the histogram's bin centres at amax (`levels` above 0: 127, or
// 255 for a tensor stored unsigned) and measures the clipped share and the
// SQNR of the result.
MethodChoice measure(const TensorStats& stats, const std::string& method, double amax, int levels) {
  MethodChoice m{method, amax, 0, 0};
  const std::vector<int64_t>& bins = stats.histogram();
  const double width = stats.bin_width(), step = amax / levels;
  double signal = 0, noise = 0, clipped = 0, total = 0;
  for (size_t b = 0; b < bins.size(); ++b) {
    if (bins[b] == 0) continue;
    const double centre = (static_cast<double>(b) + 0.5) * width, n = static_cast<double>(bins[b]);
    const double q = step > 0 ? std::min(std::round(centre / step), double(levels)) * step : 0.0;
    signal += n * centre * centre;
    noise += n * (centre - q) * (centre - q);
    total += n;
    if (centre > amax) clipped += n;
  }
  m.clipped_share = total > 0 ? clipped / total : 0;
  m.sqnr_db = sqnr_db(signal, noise);
  return m;
}

// Independent noise sources add: 1 / snr = sum of 1 / snr_i.
double combined_db(double a_db, double b_db) {
  return -10.0 * std::log10(std::pow(10.0, -a_db / 10.0) + std::pow(10.0, -b_db / 10.0));
}

std::string anchor_id(const std::string& name) {
  std::string id = "layer-";
  for (char ch : name) id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return id;
}

WeightView weight_view(const FloatTensor& weight, const NodeQuant& q) {
  const int64_t channels = weight.dim(0), per = weight.numel() / channels;
  WeightView v;
  double signal = 0, noise = 0;
  for (int64_t o = 0; o < channels; ++o) {
    float amax = 0;
    const float inv = 1.0f / q.weight_scale.data[o];
    for (int64_t k = o * per; k < (o + 1) * per; ++k) {
      const double w = weight.data[k], e = w - q.weight.data[k] * inv;
      amax = std::max(amax, std::abs(weight.data[k]));
      signal += w * w;
      noise += e * e;
    }
    v.channel_amax.push_back(amax);
    v.used_amax.push_back(127.0f * inv);
  }
  v.sqnr_db = sqnr_db(signal, noise);
  return v;
}

nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json choice_json(const MethodChoice& m) {
  return {{"method", m.method},
          {"amax", m.amax},
          {"clipped_share", m.clipped_share},
          {"sqnr_db", finite_or_null(m.sqnr_db)}};
}
}  // namespace

Calibration recalibrate(const Checkpoint& checkpoint, const FloatModel& folded, const QuantizedModel& model,
                        const DataOptions& data) {
  const FloatExecutor executor(folded);
  std::vector<float> images = calibration_images(checkpoint, data, model.calibration_samples);
  const int64_t count = static_cast<int64_t>(images.size()) / executor.shapes()[0].numel();
  return calibrate(executor, std::move(images), count);
}

CalibrationReport build_calibration_report(const Checkpoint& checkpoint, const FloatModel& folded,
                                           const Calibration& calibration, const QuantizedModel& model,
                                           const DataOptions& data, int64_t limit, double percentile, int worst) {
  check(model.model == checkpoint.model && model.dataset == checkpoint.dataset,
        "the quantized model is " + model.model + " on " + model.dataset + ", the checkpoint " + checkpoint.model +
            " on " + checkpoint.dataset + ": pass the checkpoint it was quantized from");
  check(calibration.stats.size() == folded.graph.nodes.size(), "the calibration does not match the checkpoint's graph");
  CalibrationReport r;
  r.model = model.model;
  r.dataset = model.dataset;
  r.method = model.method;
  r.granularity = model.granularity;
  r.scheme = model.scheme;
  r.weight_rounding = model.weight_rounding;
  r.equalized = model.equalized;
  r.bias_corrected = model.bias_corrected;
  r.calibration_samples = model.calibration_samples;
  if (!data.calib.empty()) r.calibration_from = data.calib.path;
  if (!data.eval.empty()) r.test_from = data.eval.path;
  r.percentile = percentile;

  const FloatExecutor float_model(folded);
  const Dataset test = load_evaluation_images(model_input(checkpoint), data, limit);
  r.eval = evaluate(float_model, *make_engine(model, backend_names::kCpu), test, limit, true);
  std::map<std::string, double> measured;
  for (const LayerReport& l : r.eval.layers) measured[l.name] = l.sqnr_db;

  const std::vector<int> counterpart = float_counterparts(folded.graph, model.graph);
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    const Node& n = model.graph.nodes[i];
    const NodeQuant& q = model.quant[i];
    const bool is_output = model.graph.is_output(static_cast<int>(i));
    const bool own_scale = op_traits(n.op).owns_scale && !is_output;
    if (!own_scale && !op_traits(n.op).weighted) continue;
    LayerView layer{n.name, op_name(n.op), anchor_id(n.name), std::nullopt, std::nullopt, NAN, INFINITY, {}};
    const auto it = measured.find(is_output && model.graph.output_count == 1 ? "logits" : n.name);
    if (it != measured.end()) layer.sqnr_db = it->second;
    if (own_scale) {
      check(counterpart[i] >= 0, "layer '" + n.name + "' of the quantized model is not in the checkpoint's graph");
      const TensorStats& stats = calibration.stats[counterpart[i]];
      ActivationView a;
      a.abs_histogram = stats.histogram();
      a.range = stats.range();
      a.min = stats.min();
      a.max = stats.max();
      const int levels = positive_levels(q.zero_point);
      for (AmaxMethod m : statistic_methods())
        a.methods.push_back(measure(stats, amax_method_name(m), compute_amax(stats, m, percentile, levels), levels));
      a.chosen_method = q.method;
      a.chosen_amax = q.amax;
      a.chosen = measure(stats, q.method, q.amax, levels);
      layer.activation = std::move(a);
    }
    layer.in_float = q.in_float;
    if (op_traits(n.op).weighted && !q.in_float) {  // a float node keeps its float weights: no int8 to show
      const int f = folded.graph.find(n.name);
      check(f >= 0, "layer '" + n.name + "' of the quantized model has no weights in the checkpoint");
      layer.weights = weight_view(folded.weight(folded.graph.nodes[f]), q);
    }
    layer.alone_db = combined_db(layer.activation ? layer.activation->chosen.sqnr_db : INFINITY,
                                 layer.weights ? layer.weights->sqnr_db : INFINITY);
    r.layers.push_back(std::move(layer));
  }

  std::vector<const LayerView*> order = worst_first(r);
  for (int k = 0; k < worst && k < static_cast<int>(order.size()); ++k) {
    if (!std::isfinite(order[k]->sqnr_db)) break;
    LayerView& layer = r.layers[order[k] - r.layers.data()];
    layer.advice = advice_for(layer, r);
  }
  return r;
}

std::vector<const LayerView*> worst_first(const CalibrationReport& report) {
  std::vector<const LayerView*> order;
  for (const LayerView& l : report.layers) order.push_back(&l);
  // Unmeasured (NaN) and exact (infinite) layers go last.
  auto key = [](const LayerView* l) { return std::isnan(l->sqnr_db) ? INFINITY : l->sqnr_db; };
  std::stable_sort(order.begin(), order.end(), [&](const LayerView* a, const LayerView* b) { return key(a) < key(b); });
  return order;
}

std::string calibration_report_json(const CalibrationReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerView& l : r.layers) {
    nlohmann::json j = {{"name", l.name},
                        {"op", l.op},
                        {"id", l.id},
                        {"sqnr_db", finite_or_null(l.sqnr_db)},
                        {"alone_db", finite_or_null(l.alone_db)},
                        {"advice", l.advice},
                        {"in_float", l.in_float}};
    if (l.activation) {
      nlohmann::json methods = nlohmann::json::array();
      for (const MethodChoice& m : l.activation->methods) methods.push_back(choice_json(m));
      j["activation"] = {{"min", l.activation->min},
                         {"max", l.activation->max},
                         {"chosen", choice_json(l.activation->chosen)},
                         {"methods", methods}};
    }
    if (l.weights) {
      const auto [lo, hi] = std::minmax_element(l.weights->channel_amax.begin(), l.weights->channel_amax.end());
      j["weights"] = {{"channels", l.weights->channel_amax.size()},
                      {"channel_amax_min", *lo},
                      {"channel_amax_max", *hi},
                      {"sqnr_db", finite_or_null(l.weights->sqnr_db)}};
    }
    layers.push_back(j);
  }
  const bool masks = r.eval.labelled_pixels > 0;  // the top-1 entries are pixel accuracies
  return nlohmann::json({{"checkpoint", r.checkpoint_path},
                         {"quantized", r.quantized_path},
                         {"model", r.model},
                         {"dataset", r.dataset},
                         {"method", r.method},
                         {"granularity", r.granularity},
                         {"scheme", r.scheme},
                         {"weight_rounding", r.weight_rounding},
                         {"equalized", r.equalized},
                         {"bias_corrected", r.bias_corrected},
                         {"calibration_samples", r.calibration_samples},
                         {"images", r.eval.images},
                         {"float_top1", r.eval.labelled ? nlohmann::json(r.eval.float_top1) : nlohmann::json()},
                         {"int8_top1", r.eval.labelled ? nlohmann::json(r.eval.int8_top1) : nlohmann::json()},
                         {"agreement", r.eval.agreement},
                         {"float_mean_iou", masks ? nlohmann::json(r.eval.float_mean_iou) : nlohmann::json()},
                         {"int8_mean_iou", masks ? nlohmann::json(r.eval.int8_mean_iou) : nlohmann::json()},
                         {"accuracy_target", r.target ? target_json(*r.target, r.goal) : nlohmann::json()},
                         {"layers", layers}})
      .dump(2);
}

}  // namespace octet
