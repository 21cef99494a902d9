// `octet quantize`: checkpoint + calibration data -> quantized model file.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/file_io.h"
#include "common/phase_clock.h"
#include "qmodel/precision.h"
#include "quant/accuracy_target.h"
#include "quant/pipeline.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct QuantizeCommand {
  std::string checkpoint, output, json;
  DataArgs data;
  NamedQuantizeOptions q;
  TargetArgs goal;
};

// The accuracy target's search as a table; returns it as JSON.
nlohmann::json report_target(std::FILE* out, const TargetResult& t, const AccuracyTarget& target) {
  std::string goal;
  if (target.min_agreement >= 0) goal += "agreement >= " + std::to_string(target.min_agreement).substr(0, 6) + "%";
  if (target.max_drop >= 0)
    goal += std::string(goal.empty() ? "" : ", ") + "top-1 drop <= " + std::to_string(target.max_drop).substr(0, 5);
  std::fprintf(out, "accuracy target: %s on %lld validation images (training split, none of the calibration images)\n",
               goal.c_str(), static_cast<long long>(t.validation_images));
  const auto score_text = [](const ValidationScore& s) {
    char text[96];
    std::snprintf(text, sizeof text, "agreement %.2f%%, top-1 float %.2f%% int8 %.2f%%", s.agreement, s.float_top1,
                  s.top1);
    return std::string(text);
  };
  std::fprintf(out, "all int8: %s\n", score_text(t.all_int8).c_str());
  if (!t.sensitivity.empty())
    std::fprintf(out, "%-22s %-10s %7s  %14s %14s\n", "layer", "op", "MACs", "only it float", "only it int8");
  for (const LayerSensitivity& l : t.sensitivity)
    std::fprintf(out, "%-22s %-10s %6.1f%%  %13.2f%% %13.2f%%\n", l.name.c_str(), l.op.c_str(), 100 * l.mac_share,
                 l.only_it_float, l.only_it_int8);
  std::string chosen;
  for (const std::string& name : t.float_layers) chosen += (chosen.empty() ? "" : ", ") + name;
  std::fprintf(out, "%s: %s; float layers: %s\n", t.met ? "target met" : "target NOT met, best model written",
               score_text(t.chosen).c_str(), chosen.empty() ? "none" : chosen.c_str());
  return target_json(t, target);
}

void run_quantize(const QuantizeCommand& c) {
  PhaseClock clock;
  clock.start("load");
  const DataOptions data = c.data.data();
  Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  c.data.normalise(&checkpoint.mean, &checkpoint.std, "'" + c.checkpoint + "'");
  const QuantizeOptions options = quantize_options_for(c.q, checkpoint, c.checkpoint);
  const bool large_network = c.q.large_network_defaults(checkpoint);
  const QuantizeResult r = quantize_checkpoint(checkpoint, data, options, c.q.calibration_samples, &clock);
  std::optional<TargetResult> target;
  if (c.goal.target.set()) {
    clock.start("accuracy target");
    target = reach_target(r, checkpoint, data, c.goal, c.q.calibration_samples);
  }
  const QuantizedModel& model = target ? target->model : r.model;
  clock.start("write");
  save_quantized_model(model, c.output);
  clock.stop();
  std::FILE* out = report_stream(c.json);
  std::fprintf(out, "%-22s %-16s %10s %10s  %s\n", "tensor", "op", "amax", "scale", "method");
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    const Node& n = model.graph.nodes[i];
    const NodeQuant& q = model.quant[i];
    if (q.method.empty() || q.method == "inherited") continue;
    const std::string bits = q.bits > 8 ? " (" + std::to_string(q.bits) + "-bit)" : "";
    std::fprintf(out, "%-22s %-16s %10.4f %10.3f  %s%s\n", n.name.c_str(), op_name(n.op), q.amax, q.scale,
                 q.method.c_str(), bits.c_str());
    points.push_back({{"name", n.name},
                      {"op", op_name(n.op)},
                      {"amax", q.amax},
                      {"scale", q.scale},
                      {"method", q.method},
                      {"bits", q.bits}});
  }
  std::fprintf(out, "wrote %s (%s, %s, %s scheme, %lld calibration images)\n", c.output.c_str(), r.model.method.c_str(),
              r.model.granularity.c_str(), r.model.scheme.c_str(), static_cast<long long>(r.model.calibration_samples));
  nlohmann::json equalized = nlohmann::json::array();
  for (const EqualizedPair& p : r.equalized)
    equalized.push_back({{"first", p.first}, {"second", p.second}, {"relu6_became_relu", p.relu6_became_relu}});
  if (c.q.equalize) {
    const auto relu6 = std::count_if(r.equalized.begin(), r.equalized.end(), [](auto& p) { return p.relu6_became_relu; });
    std::fprintf(out, "equalized %zu conv pairs (%ld of them through a ReLU6, now ReLU)\n", r.equalized.size(),
                 static_cast<long>(relu6));
  }
  if (c.q.bias_correction) std::fprintf(out, "bias correction: on (%lld calibration images' channel means)\n",
                                        static_cast<long long>(r.model.calibration_samples));
  const nlohmann::json target_report = target ? report_target(out, *target, c.goal.target) : nlohmann::json();
  const PrecisionSummary precision = precision_summary(model);
  std::fprintf(out, "precision: %s\n", precision.describe().c_str());
  std::fprintf(out, "%-22s %9s %12s %12s\n", "phase", "seconds", "CPU seconds", "peak MB");
  nlohmann::json phases = nlohmann::json::array();
  for (const PhaseTime& p : clock.phases()) {
    std::fprintf(out, "%-22s %9.2f %12.2f %12.0f\n", p.name.c_str(), p.seconds, p.cpu_seconds, p.peak_mb);
    phases.push_back({{"name", p.name}, {"seconds", p.seconds}, {"cpu_seconds", p.cpu_seconds}, {"peak_mb", p.peak_mb}});
  }
  std::fprintf(out, "%-22s %9.2f %12.2f %12.0f\n", "total", clock.total_seconds(), clock.total_cpu_seconds(),
               clock.peak_mb());
  if (!c.json.empty())
    write_text_output(c.json, nlohmann::json({{"output", c.output},
                                              {"method", r.model.method},
                                              {"granularity", r.model.granularity},
                                              {"scheme", r.model.scheme},
                                              {"calibration_samples", r.model.calibration_samples},
                                              {"weight_rounding", options.weight_rounding},
                                              {"large_network_defaults", large_network},
                                              {"equalized_pairs", c.q.equalize ? equalized : nlohmann::json()},
                                              {"bias_correction", c.q.bias_correction},
                                              {"precision", precision_json(precision)},
                                              {"accuracy_target", target_report},
                                              {"points", points},
                                              {"phases", phases},
                                              {"seconds", clock.total_seconds()},
                                              {"cpu_seconds", clock.total_cpu_seconds()},
                                              {"peak_mb", clock.peak_mb()}})
                                      .dump(2) +
                                  "\n");
  if (target && !target->met)
    throw GoalNotMet("no model met the accuracy target on the validation images; wrote the closest (agreement " +
                     std::to_string(target->chosen.agreement).substr(0, 5) + "%) to " + c.output);
}
}  // namespace

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("quantize", "Calibrate a checkpoint and write the int8 model");
  auto c = std::make_shared<QuantizeCommand>();
  cmd->add_option("--checkpoint", c->checkpoint, "Float checkpoint (octet train)")->required();
  add_data_options(cmd, c->data, kDatasetFolder | kCalibrationData);
  add_quantize_options(cmd, c->q);
  add_target_options(cmd, c->goal);
  cmd->add_option("-o,--output", c->output, "Quantized model file to write")->required();
  add_json_option(cmd, c->json, "the chosen scales");
  cmd->callback([c] { run_quantize(*c); });
}

}  // namespace octet
