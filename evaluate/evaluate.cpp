#include "evaluate/evaluate.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/progress.h"
#include "evaluate/label_scores.h"
#include "graph/op_traits.h"
#include "graph/output_decode.h"

namespace octet {

namespace {
using Clock = std::chrono::steady_clock;

int64_t argmax_row(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t k = 1; k < n; ++k)
    if (row[k] > row[best]) best = k;
  return best;
}

bool has_own_scale(const QuantizedModel& m, int i) {
  return op_traits(m.graph.nodes[i].op).owns_scale && !m.graph.is_output(i);
}

double sqnr_db(double signal, double noise) {
  if (noise == 0) return INFINITY;
  return 10.0 * std::log10(signal / noise);
}

// Adds the squares of `reference` and of its difference from `int8` to signal and noise.
void add_sqnr_terms(const FloatTensor& reference, const FloatTensor& int8, double& signal, double& noise) {
  for (int64_t v = 0; v < reference.numel(); ++v) {
    const double f = reference.data[v], e = f - int8.data[v];
    signal += f * f;
    noise += e * e;
  }
}

// The same for an output node's values, and for them as predict returns them: decoded where its view has a decode
// (a YOLOv8 segmentation head's mask coefficients, undecoded, count among a decoded output's too).
void add_output_sqnr_terms(const OutputView& view, const ActShape& s, const FloatTensor& reference,
                           const FloatTensor& int8, int64_t batch, double& signal, double& noise, double& decoded_signal,
                           double& decoded_noise) {
  add_sqnr_terms(reference, int8, signal, noise);
  if (view.decode.kind == DecodeKind::None) return add_sqnr_terms(reference, int8, decoded_signal, decoded_noise);
  FloatTensor decoded_reference = reference, decoded_int8 = int8;
  decode_node_values(view, s, decoded_reference.data, batch);
  decode_node_values(view, s, decoded_int8.data, batch);
  add_sqnr_terms(decoded_reference, decoded_int8, decoded_signal, decoded_noise);
}
}  // namespace

std::vector<int> float_counterparts(const Graph& fg, const Graph& qg) {
  const auto consumers = fg.consumers();
  std::vector<int> out(qg.nodes.size(), -1);
  for (size_t i = 0; i < qg.nodes.size(); ++i) {
    const Node& n = qg.nodes[i];
    int f = fg.find(n.name);
    if (f >= 0 && op_traits(n.op).absorbs_residual && n.inputs.size() == 2)
      f = consumers[f].size() == 1 && fg.nodes[consumers[f][0]].op == Op::Add ? consumers[f][0] : -1;
    out[i] = f;
  }
  return out;
}

void check_labels_score_one_output(const Graph& g, const Dataset& test) {
  const bool rows = has_output_views(g);
  check(!test.labelled() || (g.output_count == 1 && !rows),
        test.name + ": labels score one output of classes, and the model has " + std::to_string(g.output_count) +
            (rows ? " returning a detection head's rows" : "") +
            " (evaluate it without labels: int8 compared with float, output by output)");
}

EvalReport evaluate(const FloatExecutor& float_model, const Engine& engine, const Dataset& test, int64_t limit,
                    bool with_layers, int64_t batch_size, const FloatExecutor* layer_reference) {
  const QuantizedModel& qm = engine.model();
  const std::vector<ActShape> shapes = qm.graph.shapes();
  const ActShape input = shapes[0];
  const int64_t images = limit > 0 ? std::min(limit, test.size()) : test.size();
  check(images > 0, "no test images to evaluate");
  check(float_model.shapes()[0] == input,
        "the float and quantized models take different inputs (" + to_string(float_model.shapes()[0]) + " vs " +
            to_string(input) + ")");
  check(test.channels == input.c && test.height == input.h && test.width == input.w,
        "the dataset's images do not fit the model's input " + to_string(input));

  const std::vector<int> counterpart = float_counterparts(float_model.graph(), qm.graph);
  std::map<int, int> watched;  // float node -> quantized node
  if (with_layers)
    for (size_t i = 0; i < qm.graph.nodes.size(); ++i)
      if (has_own_scale(qm, static_cast<int>(i)) && counterpart[i] >= 0) watched[counterpart[i]] = static_cast<int>(i);
  // Per node: its own; an output's (int32 dequantized) at its index too.
  std::vector<double> signal(qm.graph.nodes.size(), 0.0), noise(qm.graph.nodes.size(), 0.0);
  // An output node's decoded values' (YOLOv5's decode: graph/output_decode.h), the rows' SQNR.
  std::vector<double> decoded_signal(qm.graph.nodes.size(), 0.0), decoded_noise(qm.graph.nodes.size(), 0.0);

  EvalReport report;
  report.images = images;
  report.labelled = test.labelled();
  int64_t agree = 0;
  // A detection head's rows (graph/output_view.h) predict no class per channel vector: compared by SQNR alone.
  const bool predicts = !has_output_views(qm.graph);
  const int64_t classes = qm.num_classes(), rows = predicts ? qm.predictions_per_image() : 0;
  check_labels_score_one_output(qm.graph, test);
  check_labels_fit(test, shapes.back(), "the model");
  LabelScores float_scores(classes), int8_scores(classes);
  Progress progress("evaluating", images);
  for (int64_t first = 0; first < images; first += batch_size) {
    const int64_t n = std::min(batch_size, images - first);
    const std::vector<float> x = normalized_images(test, qm.mean, qm.std, first, n);
    std::map<int, FloatTensor> float_values;  // by quantized node
    auto t0 = Clock::now();
    const auto keep_watched = [&](int node, const FloatTensor& act) {
      auto it = watched.find(node);
      if (it != watched.end()) float_values[it->second] = act;
    };
    const bool own_reference = layer_reference && with_layers;
    const std::vector<FloatTensor> float_outputs =
        own_reference ? float_model.run_outputs(x.data(), n) : float_model.run_outputs(x.data(), n, keep_watched);
    const FloatTensor& float_logits = float_outputs.back();
    const auto float_done = Clock::now();
    if (own_reference) layer_reference->run(x.data(), n, keep_watched);  // timed by neither side
    auto t1 = Clock::now();
    // The hook only where layers are compared: a backend may run slower with one.
    Engine::Hook hook;
    if (with_layers)
      hook = [&](int node, const int8_t* q, int64_t count) {
        auto it = float_values.find(node);
        if (it == float_values.end()) return;
        const float inv = 1.0f / qm.quant[node].scale;
        const int32_t zero_point = qm.quant[node].zero_point;
        const float* ref = it->second.ptr();
        const auto* wide = qm.value_bytes(node) == 2 ? reinterpret_cast<const int16_t*>(q) : nullptr;
        for (int64_t k = 0; k < count; ++k) {
          const double e = ref[k] - float((wide ? int32_t{wide[k]} : int32_t{q[k]}) - zero_point) * inv;
          signal[node] += double(ref[k]) * ref[k];
          noise[node] += e * e;
        }
      };
    const std::vector<Int32Tensor> int8_outputs = engine.run_outputs(x.data(), n, hook);
    auto t2 = Clock::now();
    check(int8_outputs.size() == float_outputs.size(), engine.backend() + " returns one output of several");
    FloatTensor int8_logits;  // the last output's, dequantized
    for (size_t k = 0; k < int8_outputs.size(); ++k) {
      const int node = qm.graph.first_output() + static_cast<int>(k);
      int8_logits = engine.dequantize_logits(int8_outputs[k], node);
      add_output_sqnr_terms(qm.graph.nodes[node].view, shapes[node], float_outputs[k], int8_logits, n,
                            signal[node], noise[node], decoded_signal[node], decoded_noise[node]);
    }
    report.float_seconds += std::chrono::duration<double>(float_done - t0).count();
    report.int8_seconds += std::chrono::duration<double>(t2 - t1).count();
    for (int64_t r = 0; r < n * rows; ++r) {  // a row: one image's logits, or one pixel's
      const int64_t pf = argmax_row(float_logits.ptr() + r * classes, classes);
      const int64_t pq = argmax_row(int8_logits.ptr() + r * classes, classes);
      if (report.labelled) {
        float_scores.add(test.labels[first * rows + r], pf);
        int8_scores.add(test.labels[first * rows + r], pq);
      }
      agree += pf == pq;
    }
    progress.advance(n);
  }
  progress.finish();
  check(!report.labelled || float_scores.labelled() > 0,
        test.name + ": no pixel of the first " + std::to_string(images) + " masks has a label (all 255)");
  report.float_top1 = float_scores.top1();
  report.int8_top1 = int8_scores.top1();
  if (rows > 1 && report.labelled) {
    report.float_mean_iou = float_scores.mean_iou();
    report.int8_mean_iou = int8_scores.mean_iou();
    report.labelled_pixels = float_scores.labelled();
  }
  report.agreement = rows ? 100.0 * agree / (static_cast<double>(images) * rows) : 0.0;
  report.predictions_per_image = rows;
  for (const auto& [f, i] : watched) {
    const Node& n = qm.graph.nodes[i];
    const NodeQuant& q = qm.quant[i];
    report.layers.push_back(
        {n.name, op_name(n.op), q.scale, q.amax, q.method, sqnr_db(signal[i], noise[i]), q.zero_point, q.bits});
  }
  for (int o : qm.graph.outputs())  // one output: "logits", as the report and older JSON name it
    report.layers.push_back({qm.graph.output_count == 1 ? std::string("logits") : qm.graph.nodes[o].name, "output", 0,
                             0, "int32", sqnr_db(signal[o], noise[o])});
  for (const ModelOutput& m : model_outputs(qm.graph, shapes)) {  // a detection head's rows: all its convs
    if (m.name.empty()) continue;
    double rows_signal = 0, rows_noise = 0;
    const bool decoded = output_decoded(qm.graph, m);  // then compared as predict returns them
    for (int o : m.nodes)
      rows_signal += (decoded ? decoded_signal : signal)[o], rows_noise += (decoded ? decoded_noise : noise)[o];
    report.layers.push_back({m.name, "rows", 0, 0, "int32", sqnr_db(rows_signal, rows_noise)});
  }
  return report;
}

std::string eval_report_json(const EvalReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerReport& l : r.layers)
    layers.push_back({{"name", l.name},
                      {"op", l.op},
                      {"scale", l.scale},
                      {"zero_point", l.zero_point},
                      {"amax", l.amax},
                      {"method", l.method},
                      {"bits", l.bits},
                      {"sqnr_db", std::isfinite(l.sqnr_db) ? nlohmann::json(l.sqnr_db) : nlohmann::json(nullptr)}});
  // Without labels the top-1 entries stay, as null: the JSON keeps its shape.
  auto top1 = [&](double v) { return r.labelled ? nlohmann::json(v) : nlohmann::json(nullptr); };
  auto masks = [&](auto v) { return r.labelled_pixels > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return nlohmann::json({{"images", r.images},
                         {"float_top1", top1(r.float_top1)},
                         {"int8_top1", top1(r.int8_top1)},
                         {"top1_difference", top1(r.int8_top1 - r.float_top1)},
                         {"agreement", r.agreement},
                         {"predictions_per_image", r.predictions_per_image},
                         {"labelled_pixels", masks(r.labelled_pixels)},
                         {"float_mean_iou", masks(r.float_mean_iou)},
                         {"int8_mean_iou", masks(r.int8_mean_iou)},
                         {"float_seconds", r.float_seconds},
                         {"int8_seconds", r.int8_seconds},
                         {"layers", layers}})
      .dump(2);
}

std::string eval_report_table(const EvalReport& r) {
  std::string out;
  char line[256];
  if (!r.layers.empty()) {
    std::snprintf(line, sizeof line, "%-22s %-16s %10s %10s  %-12s %9s\n", "layer", "op", "amax", "scale", "method",
                  "SQNR dB");
    out += line;
    for (const LayerReport& l : r.layers) {
      const std::string method = l.bits > 8 ? l.method + " (" + std::to_string(l.bits) + "-bit)" : l.method;
      std::snprintf(line, sizeof line, "%-22s %-16s %10.4f %10.3f  %-12s %9.2f\n", l.name.c_str(), l.op.c_str(),
                    l.amax, l.scale, method.c_str(), l.sqnr_db);
      out += line;
    }
    out += "\n";
  }
  if (r.labelled_pixels > 0)
    std::snprintf(line, sizeof line,
                  "images %lld (%lld labelled pixels)   pixel accuracy float %.2f%%  int8 %.2f%%   mean IoU float "
                  "%.2f%%  int8 %.2f%%   agreement %.2f%%\n",
                  static_cast<long long>(r.images), static_cast<long long>(r.labelled_pixels), r.float_top1,
                  r.int8_top1, r.float_mean_iou, r.int8_mean_iou, r.agreement);
  else if (r.labelled)
    std::snprintf(line, sizeof line,
                  "images %lld   float top-1 %.2f%%   int8 top-1 %.2f%%   difference %+.2f   agreement %.2f%%\n",
                  static_cast<long long>(r.images), r.float_top1, r.int8_top1, r.int8_top1 - r.float_top1, r.agreement);
  else if (r.predictions_per_image == 0)
    std::snprintf(line, sizeof line, "images %lld   (detection rows: int8 compared with float by SQNR alone)\n",
                  static_cast<long long>(r.images));
  else if (r.predictions_per_image > 1)
    std::snprintf(line, sizeof line, "images %lld   agreement %.2f%% of %lld predictions per image   (no labels)\n",
                  static_cast<long long>(r.images), r.agreement, static_cast<long long>(r.predictions_per_image));
  else
    std::snprintf(line, sizeof line, "images %lld   agreement %.2f%%   (no labels: top-1 not measured)\n",
                  static_cast<long long>(r.images), r.agreement);
  out += line;
  return out;
}

}  // namespace octet
