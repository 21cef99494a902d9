// `octet hist`: per-layer weight and activation histograms and ranges, as the
// course lab plotted them: CSV and JSON tables, the min/max and 3-sigma table,
// and one SVG plot per layer.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibrate/layer_histograms.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/svg_plot.h"
#include "quant/pipeline.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct HistCommand {
  std::string checkpoint, out;
  DataArgs data;
  int bins = 60;
  int64_t samples = 1024;
};

std::string file_stem(const LayerHistogram& h) {
  std::string stem = h.kind + "_" + h.name;
  for (char& ch : stem)
    if (ch == '.' || ch == '/') ch = '_';
  return stem;
}

void run_hist(const HistCommand& c) {
  check(c.bins > 0, "--bins must be positive");
  const DataOptions data = c.data.data();
  Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  c.data.normalise(&checkpoint.mean, &checkpoint.std, "'" + c.checkpoint + "'");
  const FloatModel folded = fold_for_inference(checkpoint.graph, checkpoint.params);
  const FloatExecutor executor(folded);
  std::vector<float> images = calibration_images(checkpoint, data, c.samples);
  const int64_t count = static_cast<int64_t>(images.size()) / executor.shapes()[0].numel();
  const Calibration cal = calibrate(executor, std::move(images), count);
  std::vector<LayerHistogram> layers = weight_histograms(folded, c.bins);
  for (LayerHistogram& h : activation_histograms(executor, cal, c.bins)) layers.push_back(std::move(h));

  make_directories(c.out);
  std::ostringstream hist_csv, range_csv;
  hist_csv << "kind,layer,bin,lo,hi,count\n";
  range_csv << "kind,layer,op,min,max,mean,std,sigma3_lo,sigma3_hi\n";
  nlohmann::json json = nlohmann::json::array();
  std::printf("%-10s %-22s %11s %11s %11s %11s\n", "kind", "layer", "min", "max", "3sigma lo", "3sigma hi");
  for (const LayerHistogram& h : layers) {
    const double s3_lo = h.mean - 3 * h.std, s3_hi = h.mean + 3 * h.std;
    const double width = (h.histogram.hi - h.histogram.lo) / static_cast<double>(h.histogram.counts.size());
    for (size_t b = 0; b < h.histogram.counts.size(); ++b)
      hist_csv << h.kind << ',' << h.name << ',' << b << ',' << h.histogram.lo + b * width << ','
               << h.histogram.lo + (b + 1) * width << ',' << h.histogram.counts[b] << '\n';
    range_csv << h.kind << ',' << h.name << ',' << h.op << ',' << h.min << ',' << h.max << ',' << h.mean << ',' << h.std
              << ',' << s3_lo << ',' << s3_hi << '\n';
    json.push_back({{"kind", h.kind}, {"layer", h.name}, {"op", h.op}, {"min", h.min}, {"max", h.max},
                    {"mean", h.mean}, {"std", h.std}, {"sigma3", {s3_lo, s3_hi}},
                    {"histogram", {{"lo", h.histogram.lo}, {"hi", h.histogram.hi}, {"counts", h.histogram.counts}}},
                    {"plot", file_stem(h) + ".svg"}});
    std::printf("%-10s %-22s %11.4f %11.4f %11.4f %11.4f\n", h.kind.c_str(), h.name.c_str(), h.min, h.max, s3_lo, s3_hi);
    const std::string title = h.name + (h.kind == "weight" ? " weights" : " output") + " (" + checkpoint.model + ")";
    write_text_output(c.out + "/" + file_stem(h) + ".svg",
                      histogram_svg(title, h.histogram.counts, h.histogram.lo, h.histogram.hi,
                                    h.kind == "weight" ? "weight value" : "activation value"));
  }
  write_text_output(c.out + "/histograms.csv", hist_csv.str());
  write_text_output(c.out + "/ranges.csv", range_csv.str());
  write_text_output(c.out + "/histograms.json",
                    nlohmann::json({{"checkpoint", c.checkpoint}, {"calibration_samples", cal.samples},
                                    {"bins", c.bins}, {"layers", json}})
                            .dump(2) +
                        "\n");
  std::printf("wrote %zu plots, histograms.csv, ranges.csv and histograms.json to %s\n", layers.size(), c.out.c_str());
}
}  // namespace

void add_hist_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("hist", "Per-layer weight and activation histograms, ranges and plots");
  auto c = std::make_shared<HistCommand>();
  cmd->add_option("--checkpoint", c->checkpoint, "Float checkpoint")->required();
  add_data_options(cmd, c->data, kDatasetFolder | kCalibrationData);
  cmd->add_option("--out", c->out, "Output folder")->required();
  cmd->add_option("--bins", c->bins, "Histogram bins (the lab used 60)")->capture_default_str();
  cmd->add_option("--calib-samples", c->samples, "Training images (or --calib-data's) the activations are recorded on")->capture_default_str();
  cmd->callback([c] { run_hist(*c); });
}

}  // namespace octet
