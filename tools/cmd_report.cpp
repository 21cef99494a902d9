// `octet report`: one self-contained HTML page with everything calibration
// found: the run, float vs int8 on the test set, and per layer the activation
// histogram with every amax method, the weights' channel ranges, the SQNR
// (worst first) and what to try where a layer loses most.
#include <cstdio>
#include <optional>

#include "common/error.h"
#include "common/file_io.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/equalize.h"
#include "report/data.h"
#include "report/html_page.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct ReportCommand {
  std::string checkpoint, quantized, output, json;
  DataArgs data;
  NamedQuantizeOptions q;
  TargetArgs goal;
  int64_t limit = 0;
};

void run_report(const ReportCommand& c) {
  check(c.limit >= 0, "--limit must be 0 (all test images) or more, not " + std::to_string(c.limit));
  const DataOptions data = c.data.data();
  Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  const QuantizeOptions options =
      c.quantized.empty() ? quantize_options_for(c.q, checkpoint, c.checkpoint) : c.q.options(checkpoint);
  CalibrationReport report;
  if (c.quantized.empty()) {
    c.data.normalise(&checkpoint.mean, &checkpoint.std, "'" + c.checkpoint + "'");
    const QuantizeResult r = quantize_checkpoint(checkpoint, data, options, c.q.calibration_samples);
    std::optional<TargetResult> target;
    if (c.goal.target.set()) target = reach_target(r, checkpoint, data, c.goal, c.q.calibration_samples, true);
    report = build_calibration_report(checkpoint, r.folded, r.calibration, target ? target->model : r.model, data,
                                      c.limit, options.percentile);
    report.target = std::move(target);
    report.goal = c.goal.target;
  } else {
    QuantizedModel model = load_quantized_model(c.quantized);
    check_quantized_from(model, "'" + c.quantized + "'", checkpoint, "'" + c.checkpoint + "'");
    c.data.normalise(&model.mean, &model.std, "'" + c.quantized + "'");
    checkpoint.mean = model.mean;  // calibrated again as the model was (quantize may have been given --mean/--std)
    checkpoint.std = model.std;
    const FloatModel checkpoint_folded = fold_for_inference(checkpoint.graph, checkpoint.params);
    const FloatModel folded = equalized_reference(checkpoint_folded, model).value_or(checkpoint_folded);
    report = build_calibration_report(checkpoint, folded, recalibrate(checkpoint, folded, model, data), model, data,
                                      c.limit, options.percentile);
  }
  report.checkpoint_path = c.checkpoint;
  report.quantized_path = c.quantized;
  write_text_output(c.output, calibration_report_html(report));
  if (!c.json.empty()) write_text_output(c.json, calibration_report_json(report) + "\n");

  std::FILE* out = report_stream(c.json);
  const char* accuracy = report.eval.labelled_pixels > 0 ? "pixel accuracy" : "top-1";
  if (report.eval.labelled)
    std::fprintf(out, "images %lld   float %s %.2f%%   int8 %s %.2f%%   agreement %.2f%%\n",
                 static_cast<long long>(report.eval.images), accuracy, report.eval.float_top1, accuracy,
                 report.eval.int8_top1, report.eval.agreement);
  else  // 0% would read as a measured top-1
    std::fprintf(out, "images %lld   agreement %.2f%%   (no labels: top-1 not measured)\n",
                 static_cast<long long>(report.eval.images), report.eval.agreement);
  if (report.eval.labelled_pixels > 0)
    std::fprintf(out, "mean IoU   float %.2f%%   int8 %.2f%%\n", report.eval.float_mean_iou, report.eval.int8_mean_iou);
  std::fprintf(out, "worst layers:");
  const std::vector<const LayerView*> worst = worst_first(report);
  for (size_t k = 0; k < worst.size() && k < 3; ++k)
    std::fprintf(out, "  %s %.1f dB", worst[k]->name.c_str(), worst[k]->sqnr_db);
  std::fprintf(out, "\n");
  if (const auto& t = report.target) {
    std::string layers;
    for (const std::string& name : t->float_layers) layers += (layers.empty() ? "" : ", ") + name;
    std::fprintf(out, "accuracy target %s on %lld validation images: agreement %.2f%% all int8, %.2f%% with %s in float\n",
                 t->met ? "met" : "NOT met", static_cast<long long>(t->validation_images), t->all_int8.agreement,
                 t->chosen.agreement, layers.empty() ? "no layer" : layers.c_str());
  }
  std::fprintf(out, "wrote %s (%zu layers)\n", c.output.c_str(), report.layers.size());
}
}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "One self-contained HTML calibration report: histograms, amax, SQNR");
  auto c = std::make_shared<ReportCommand>();
  cmd->add_option("--checkpoint", c->checkpoint, "Float checkpoint")->required();
  cmd->add_option("--quantized", c->quantized,
                  "Quantized model to report on (default: quantize the checkpoint here with the options below)");
  add_data_options(cmd, c->data, kDatasetFolder | kCalibrationData | kEvaluationData);
  add_quantize_options(cmd, c->q);
  add_target_options(cmd, c->goal);
  cmd->add_option("--limit", c->limit, "Evaluate only the first N test images (0, the default: all)");
  cmd->add_option("-o,--output", c->output, "HTML file to write")->required();
  add_json_option(cmd, c->json, "the report's figures");
  cmd->footer(
      "With an accuracy target (--min-agreement, --max-drop), the report is of the model its search chose and shows "
      "every weighted layer's sensitivity (agreement with only it in float, with only it in int8) and the decision. "
      "With --quantized, the calibration is recorded again on the same training images (the count the model "
      "records; give the same --calib-data as octet quantize had); pass --percentile if the model was quantized with "
      "another percentile than the default.");
  cmd->callback([c, cmd] {
    if (!c->quantized.empty())
      for (const char* option :
           {"--method", "--granularity", "--scheme", "--weight-rounding", "--calib-samples", "--auto-samples",
            "--float-nodes", "--equalize", "--bias-correction", "--activations", "--wide-bits", "--min-agreement",
            "--max-drop", "--val-samples"})
        check(cmd->count(option) == 0, std::string(option) +
                                           " sets how the report quantizes the checkpoint itself; with --quantized "
                                           "the model's own choices are reported");
    run_report(*c);
  });
}

}  // namespace octet
