// `octet predict`: the int32 logits and predicted classes of the first N test
// images on a backend (and, with --checkpoint, the float logits), as JSON for
// scripts and tests that compare runtimes or the Python module bit for bit.
// With per-channel weight scales each class's int32 logit has its own scale,
// so the int8 prediction is the argmax of int32 logit * logit_scale.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "graph/float_executor.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/pipeline.h"
#include "runtime/engine.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct PredictCommand {
  std::string quantized, checkpoint, backend = backend_names::kCpu, json;
  DataArgs data;
  int64_t limit = 0;
};

constexpr int64_t kBatch = 250;

// Logits [images][classes] as JSON rows, the predicted classes (argmax of
// logit * scale[class]) and the count of correct ones (none without labels).
template <typename T>
nlohmann::json logit_rows(const std::vector<T>& logits, const std::vector<float>& scale, const Dataset& test,
                          std::vector<int64_t>* predictions, int64_t* correct) {
  const int64_t classes = static_cast<int64_t>(scale.size());
  nlohmann::json rows = nlohmann::json::array();
  const int64_t images = static_cast<int64_t>(logits.size()) / classes;
  *correct = 0;
  for (int64_t i = 0; i < images; ++i) {
    const T* row = logits.data() + i * classes;
    rows.push_back(std::vector<T>(row, row + classes));
    int64_t best = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (static_cast<float>(row[k]) * scale[k] > static_cast<float>(row[best]) * scale[best]) best = k;
    predictions->push_back(best);
    *correct += test.labelled() && best == test.labels[i];
  }
  return rows;
}

void run_predict(const PredictCommand& c) {
  check(c.limit >= 0, "--limit must be 0 (all test images) or more, not " + std::to_string(c.limit));
  const DataOptions data = c.data.data();
  QuantizedModel model = load_quantized_model(c.quantized);
  check(model.predictions_per_image() == 1,
        "'" + c.quantized + "' returns an image of logits (" + to_string(model.graph.shapes().back()) +
            "), and octet predict writes a class per image: compare it with float with octet eval --quantized, or "
            "read its logits with the Python module's predict");
  c.data.normalise(&model.mean, &model.std, "'" + c.quantized + "'");
  const Dataset test = load_evaluation_images(model_input(model), data, c.limit);
  const int64_t images = c.limit > 0 ? std::min(c.limit, test.size()) : test.size();
  const int64_t classes = model.num_classes();
  const std::unique_ptr<Engine> engine = make_engine(model, c.backend);
  const std::vector<float>& logit_scale = model.quant[model.output()].logit_scale.data;

  std::vector<int32_t> int8_logits;
  std::vector<float> float_logits;
  std::unique_ptr<FloatExecutor> float_model;
  if (!c.checkpoint.empty()) {
    const Checkpoint checkpoint = load_checkpoint(c.checkpoint);
    check_quantized_from(model, "'" + c.quantized + "'", checkpoint, "'" + c.checkpoint + "'");
    float_model = std::make_unique<FloatExecutor>(fold_for_inference(checkpoint.graph, checkpoint.params));
  }
  for (int64_t first = 0; first < images; first += kBatch) {
    const int64_t n = std::min(kBatch, images - first);
    const std::vector<float> x = normalized_images(test, model.mean, model.std, first, n);
    const Int32Tensor logits = engine->run(x.data(), n);
    int8_logits.insert(int8_logits.end(), logits.data.begin(), logits.data.end());
    if (float_model) {
      const FloatTensor f = float_model->run(x.data(), n);
      float_logits.insert(float_logits.end(), f.data.begin(), f.data.end());
    }
  }

  std::vector<int64_t> int8_predictions, float_predictions;
  int64_t int8_correct = 0, float_correct = 0;
  nlohmann::json out = {{"quantized", c.quantized},
                        {"model", model.model},
                        {"dataset", model.dataset},
                        {"backend", engine->backend()},
                        {"images", images},
                        {"labels", test.labelled() ? nlohmann::json(std::vector<int>(test.labels.begin(),
                                                                                      test.labels.begin() + images))
                                                   : nlohmann::json()},
                        {"logit_scale", logit_scale},
                        {"int8_logits", logit_rows(int8_logits, logit_scale, test, &int8_predictions, &int8_correct)}};
  out["int8_predictions"] = int8_predictions;
  const double int8_top1 = 100.0 * static_cast<double>(int8_correct) / static_cast<double>(images);
  auto top1 = [&](double v) { return test.labelled() ? nlohmann::json(v) : nlohmann::json(); };  // null: no labels
  out["int8_top1"] = top1(int8_top1);
  // With --json - the JSON owns standard output.
  std::FILE* summary = report_stream(c.json);
  if (test.labelled())
    std::fprintf(summary, "images %lld   int8 top-1 %.2f%% (%s)", static_cast<long long>(images), int8_top1,
                 engine->backend().c_str());
  else
    std::fprintf(summary, "images %lld (no labels) on %s", static_cast<long long>(images), engine->backend().c_str());
  if (float_model) {
    out["checkpoint"] = c.checkpoint;
    out["float_logits"] = logit_rows(float_logits, std::vector<float>(classes, 1.0f), test, &float_predictions,
                                     &float_correct);
    out["float_predictions"] = float_predictions;
    const double float_top1 = 100.0 * static_cast<double>(float_correct) / static_cast<double>(images);
    out["float_top1"] = top1(float_top1);
    if (test.labelled()) std::fprintf(summary, "   float top-1 %.2f%%", float_top1);
  }
  std::fprintf(summary, "\n");
  if (!c.json.empty()) write_text_output(c.json, out.dump() + "\n");
}
}  // namespace

void add_predict_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("predict", "int32 logits and predicted classes of test images, as JSON");
  auto c = std::make_shared<PredictCommand>();
  cmd->add_option("--quantized", c->quantized, "Quantized model (octet quantize)")->required();
  cmd->add_option("--checkpoint", c->checkpoint, "Float checkpoint: add its float logits and predictions");
  add_data_options(cmd, c->data, kDatasetFolder | kEvaluationData);
  cmd->add_option("--limit", c->limit, "Only the first N test images (0, the default: all)");
  add_backend_option(cmd, c->backend);
  add_json_option(cmd, c->json, "labels, logits and predictions");
  cmd->callback([c] { run_predict(*c); });
}

}  // namespace octet
