// `octet quantize`: checkpoint + calibration data -> quantized model file.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/phase_clock.h"
#include "qmodel/precision.h"
#include "quant/pipeline.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct QuantizeCommand {
  std::string checkpoint, output, json;
  DataArgs data;
  NamedQuantizeOptions q;
};

void run_quantize(const QuantizeCommand& c) {
  PhaseClock clock;
  clock.start("load");
  const DataOptions data = c.data.data();
  Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  c.data.normalise(&checkpoint.mean, &checkpoint.std, "'" + c.checkpoint + "'");
  const QuantizeResult r = quantize_checkpoint(checkpoint, data, c.q.options(), c.q.calibration_samples, &clock);
  clock.start("write");
  save_quantized_model(r.model, c.output);
  clock.stop();
  std::FILE* out = report_stream(c.json);
  std::fprintf(out, "%-22s %-16s %10s %10s  %s\n", "tensor", "op", "amax", "scale", "method");
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < r.model.graph.nodes.size(); ++i) {
    const Node& n = r.model.graph.nodes[i];
    const NodeQuant& q = r.model.quant[i];
    if (q.method.empty() || q.method == "inherited") continue;
    std::fprintf(out, "%-22s %-16s %10.4f %10.3f  %s\n", n.name.c_str(), op_name(n.op), q.amax, q.scale, q.method.c_str());
    points.push_back({{"name", n.name}, {"op", op_name(n.op)}, {"amax", q.amax}, {"scale", q.scale}, {"method", q.method}});
  }
  std::fprintf(out, "wrote %s (%s, %s, %s scheme, %lld calibration images)\n", c.output.c_str(), r.model.method.c_str(),
              r.model.granularity.c_str(), r.model.scheme.c_str(), static_cast<long long>(r.model.calibration_samples));
  const PrecisionSummary precision = precision_summary(r.model);
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
                                              {"precision", precision_json(precision)},
                                              {"points", points},
                                              {"phases", phases},
                                              {"seconds", clock.total_seconds()},
                                              {"cpu_seconds", clock.total_cpu_seconds()},
                                              {"peak_mb", clock.peak_mb()}})
                                      .dump(2) +
                                  "\n");
}
}  // namespace

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("quantize", "Calibrate a checkpoint and write the int8 model");
  auto c = std::make_shared<QuantizeCommand>();
  cmd->add_option("--checkpoint", c->checkpoint, "Float checkpoint (octet train)")->required();
  add_data_options(cmd, c->data, kDatasetFolder | kCalibrationData);
  add_quantize_options(cmd, c->q);
  cmd->add_option("-o,--output", c->output, "Quantized model file to write")->required();
  add_json_option(cmd, c->json, "the chosen scales");
  cmd->callback([c] { run_quantize(*c); });
}

}  // namespace octet
