// `octet eval`: float top-1 of a checkpoint and, with --quantized, int8 top-1,
// their difference, agreement and the per-layer SQNR report; with masks (a
// class per pixel), pixel accuracies and mean IoU.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/file_io.h"
#include "evaluate/evaluate.h"
#include "evaluate/label_scores.h"
#include "qmodel/checkpoint_identity.h"
#include "qmodel/precision.h"
#include "quant/equalize.h"
#include "quant/pipeline.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct EvalCommand {
  std::string checkpoint, quantized, json, backend = backend_names::kCpu;
  DataArgs data;
  int64_t limit = 0;
  bool layers = true;
};

void run_eval(const EvalCommand& c) {
  check(c.limit >= 0, "--limit must be 0 (all test images) or more, not " + std::to_string(c.limit));
  const DataOptions data = c.data.data();
  Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  const FloatModel folded = fold_for_inference(checkpoint.graph, checkpoint.params);
  const FloatExecutor float_model(folded);
  std::string json;
  if (c.quantized.empty()) {
    check(folded.graph.output_count == 1, "'" + c.checkpoint + "' has " + std::to_string(folded.graph.output_count) +
                                              " outputs, and a float top-1 scores one: give --quantized to compare "
                                              "int8 with float output by output");
    check(!has_output_views(folded.graph), "'" + c.checkpoint + "' returns a detection head's rows, and a float "
                                           "top-1 scores classes: give --quantized to compare int8 with float");
    c.data.normalise(&checkpoint.mean, &checkpoint.std, "'" + c.checkpoint + "'");
    const Dataset test = load_evaluation_images(model_input(checkpoint), data, c.limit);
    check(test.labelled(), test.name + ": images without labels (--eval-labels LABELS.npy): the float top-1 needs "
                                       "them; with --quantized, octet eval compares int8 with float without labels");
    const ActShape out = float_model.shapes().back();
    check_labels_fit(test, out, "'" + c.checkpoint + "'");
    const int64_t images = c.limit > 0 ? std::min(c.limit, test.size()) : test.size();
    const int64_t classes = static_cast<int64_t>(checkpoint.classes.size()), rows = int64_t{out.h} * out.w;
    LabelScores scores(classes);
    for (int64_t first = 0; first < images; first += 250) {
      const int64_t n = std::min<int64_t>(250, images - first);
      const std::vector<float> x = normalized_images(test, checkpoint.mean, checkpoint.std, first, n);
      const FloatTensor logits = float_model.run(x.data(), n);
      for (int64_t r = 0; r < n * rows; ++r) {  // an image's logits, or a pixel's
        const float* row = logits.ptr() + r * classes;
        scores.add(test.labels[first * rows + r], std::max_element(row, row + classes) - row);
      }
    }
    nlohmann::json j = {{"images", images}, {"float_top1", scores.top1()}};
    if (rows == 1) {
      std::fprintf(report_stream(c.json), "images %lld   float top-1 %.2f%%\n", static_cast<long long>(images),
                   scores.top1());
    } else {
      check(scores.labelled() > 0, test.name + ": no pixel of its masks has a label (all 255)");
      std::fprintf(report_stream(c.json), "images %lld (%lld labelled pixels)   float pixel accuracy %.2f%%   mean IoU "
                   "%.2f%%\n", static_cast<long long>(images), static_cast<long long>(scores.labelled()),
                   scores.top1(), scores.mean_iou());
      j["labelled_pixels"] = scores.labelled();
      j["float_mean_iou"] = scores.mean_iou();
    }
    json = j.dump(2);
  } else {
    QuantizedModel model = load_quantized_model(c.quantized);
    check_quantized_from(model, "'" + c.quantized + "'", checkpoint, "'" + c.checkpoint + "'");
    c.data.normalise(&model.mean, &model.std, "'" + c.quantized + "'");
    const Dataset test = load_evaluation_images(model_input(checkpoint), data, c.limit);
    check_labels_score_one_output(model.graph, test);
    check_labels_fit(test, float_model.shapes().back(), "'" + c.checkpoint + "'");
    const std::unique_ptr<Engine> engine = make_engine(model, c.backend);
    const std::optional<FloatModel> equalized = equalized_reference(folded, model);
    const std::optional<FloatExecutor> layer_reference =
        equalized ? std::optional<FloatExecutor>(std::in_place, *equalized) : std::nullopt;
    const EvalReport report =
        evaluate(float_model, *engine, test, c.limit, c.layers, 250, layer_reference ? &*layer_reference : nullptr);
    if (model.equalized && c.layers)
      std::fprintf(report_stream(c.json), "layers compare with the checkpoint equalized as quantized (--equalize)\n");
    const PrecisionSummary precision = precision_summary(model);
    std::fprintf(report_stream(c.json), "int8 on %s (%s)\n%s", engine->backend().c_str(),
                 precision.describe().c_str(), eval_report_table(report).c_str());
    nlohmann::json j = nlohmann::json::parse(eval_report_json(report));
    j["backend"] = engine->backend();
    j["precision"] = precision_json(precision);
    json = j.dump(2);
  }
  if (!c.json.empty()) write_text_output(c.json, json + "\n");
}
}  // namespace

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Test accuracy of a checkpoint, float and int8");
  auto c = std::make_shared<EvalCommand>();
  cmd->add_option("--checkpoint", c->checkpoint, "Float checkpoint")->required();
  add_data_options(cmd, c->data, kDatasetFolder | kEvaluationData);
  cmd->add_option("--quantized", c->quantized, "Quantized model (octet quantize) to compare with float");
  cmd->add_option("--limit", c->limit, "Evaluate only the first N test images (0: all)");
  add_backend_option(cmd, c->backend);
  cmd->add_flag("!--no-layers", c->layers, "Skip the per-layer SQNR report");
  add_json_option(cmd, c->json);
  cmd->callback([c] { run_eval(*c); });
}

}  // namespace octet
