// `octet predict`: the int32 logits and predicted classes of the first N test
// images on a backend (and, with --checkpoint, the float logits), as JSON for
// scripts and tests that compare runtimes or the Python module bit for bit.
// With per-channel weight scales each class's int32 logit has its own scale,
// so the int8 prediction is the argmax of int32 logit * logit_scale. A model
// returning an image of logits predicts a class per pixel: the JSON holds
// those class maps (not the logits), --class-map writes them as a .npy.
// --outputs writes every output's values as .npy files: a model of several
// outputs (a detection head's scales, or its rows) is predicted only so.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "data/npy.h"
#include "evaluate/label_scores.h"
#include "graph/float_executor.h"
#include "graph/output_decode.h"
#include "graph/output_view.h"
#include "qmodel/checkpoint_identity.h"
#include "qmodel/output_floats.h"
#include "quant/pipeline.h"
#include "runtime/engine.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {
struct PredictCommand {
  std::string quantized, checkpoint, backend = backend_names::kCpu, json, class_map, outputs;
  DataArgs data;
  int64_t limit = 0;
};

constexpr int64_t kBatch = 250;

// The predicted classes of logits in rows of classes (an image's, or a pixel's),
// argmax of logit * scale[class], each scored against its label.
template <typename T>
std::vector<int64_t> predicted_classes(const std::vector<T>& logits, const std::vector<float>& scale,
                                       const Dataset& test, LabelScores* scores) {
  const int64_t classes = static_cast<int64_t>(scale.size());
  std::vector<int64_t> predictions;
  for (int64_t r = 0; r < static_cast<int64_t>(logits.size()) / classes; ++r) {
    const T* row = logits.data() + r * classes;
    int64_t best = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (static_cast<float>(row[k]) * scale[k] > static_cast<float>(row[best]) * scale[best]) best = k;
    predictions.push_back(best);
    if (test.labelled()) scores->add(test.labels[static_cast<size_t>(r)], best);
  }
  return predictions;
}

// Values in rows of `width` as a JSON array of rows, and rows of `height` rows where height > 1.
template <typename T>
nlohmann::json nested_rows(const std::vector<T>& values, int64_t width, int64_t height = 1) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t first = 0; first < values.size(); first += static_cast<size_t>(width * height)) {
    nlohmann::json item = nlohmann::json::array();
    for (int64_t y = 0; y < height; ++y) {
      const auto row = values.begin() + static_cast<std::ptrdiff_t>(first + static_cast<size_t>(y * width));
      item.push_back(std::vector<T>(row, row + width));
    }
    out.push_back(height > 1 ? item : item[0]);
  }
  return out;
}

// Each model output's values of `images` images as float32 .npy files in `folder`, as PyTorch returns them (NCHW,
// N x F, or a detection head's rows: graph/output_view.h, YOLOv5's or YOLOv8's decode applied where the model has one):
// int8_output<k>.npy (the int32 logits dequantized) and,
// from a float model, float_output<k>.npy. Returns the JSON of each.
nlohmann::json write_outputs(const std::string& folder, const QuantizedModel& model, int64_t images,
                             const std::vector<std::vector<int32_t>>& int8,
                             const std::vector<std::vector<float>>& floats) {
  make_directories(folder);
  const std::vector<ActShape> shapes = model.graph.shapes();
  nlohmann::json out = nlohmann::json::array();
  const std::vector<std::vector<float>> dequantized = output_floats(model, shapes, int8, images);
  std::vector<std::vector<float>> decoded_floats;  // a copy only where the model decodes its outputs
  if (!floats.empty() && has_decoded_outputs(model.graph)) {
    decoded_floats = floats;
    decode_outputs(model.graph, shapes, decoded_floats, images);
  }
  const std::vector<std::vector<float>>& float_values = decoded_floats.empty() ? floats : decoded_floats;
  const std::vector<ModelOutput> model_out = model_outputs(model.graph, shapes);
  for (size_t k = 0; k < model_out.size(); ++k) {
    const ModelOutput& m = model_out[k];
    std::vector<int64_t> shape{images};
    shape.insert(shape.end(), m.dims.begin(), m.dims.end());
    const auto write = [&](const std::string& name, const std::vector<std::vector<float>>& nhwc) {
      const std::vector<float> y = arrange_output(output_runs(model.graph, shapes, m), nhwc, images);
      const std::vector<uint8_t> bytes = npy_bytes("<f4", shape, y.data());
      const std::string path = folder + "/" + name + std::to_string(k) + ".npy";
      write_file_atomically(path, [&](std::ostream& f) {
        f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      });
      return path;
    };
    const std::string& node = model.graph.nodes[m.nodes[0]].name;  // an output of its own: named by it, as in Python
    nlohmann::json entry = {{"name", m.name.empty() ? node : m.name}, {"node", node}, {"shape", shape}};
    if (output_decoded(model.graph, m)) entry["decode"] = decode_name(model.graph, m);
    if (m.nodes.size() > 1) {
      entry["nodes"] = nlohmann::json::array();
      for (int o : m.nodes) entry["nodes"].push_back(model.graph.nodes[o].name);
    }
    entry["int8"] = write("int8_output", dequantized);
    if (!float_values.empty()) entry["float"] = write("float_output", float_values);
    out.push_back(entry);
  }
  return out;
}

void run_predict(const PredictCommand& c) {
  check(c.limit >= 0, "--limit must be 0 (all test images) or more, not " + std::to_string(c.limit));
  const DataOptions data = c.data.data();
  QuantizedModel model = load_quantized_model(c.quantized);
  const int outputs = model.graph.output_count;
  const std::vector<ModelOutput> model_out = model_outputs(model.graph, model.graph.shapes());
  const bool classes_out = outputs == 1 && !has_output_views(model.graph);  // else no classes to predict
  const std::string what = "'" + c.quantized + "' has " + std::to_string(model_out.size()) + " output" +
                           (model_out.size() == 1 ? "" : "s") + " (from '" +
                           model.graph.nodes[model.graph.first_output()].name + "'" +
                           (has_output_views(model.graph) ? ", a detection head's rows)" : ")");
  check(classes_out || !c.outputs.empty(), what + ": --outputs FOLDER writes each as a .npy");
  check(classes_out || c.class_map.empty(), "--class-map: " + what);
  const ActShape out = model.graph.shapes().back();
  const int64_t rows = model.predictions_per_image();  // a class per image, or per pixel
  check(rows > 1 || c.class_map.empty(), "--class-map: '" + c.quantized +
                                             "' predicts a class per image (its logits are " + to_string(out) +
                                             "), not per pixel; the JSON holds its predictions");
  c.data.normalise(&model.mean, &model.std, "'" + c.quantized + "'");
  const Dataset test = load_evaluation_images(model_input(model), data, c.limit);
  check(classes_out || !test.labelled(), test.name + ": labels score one output of classes, and " + what);
  check_labels_fit(test, out, "'" + c.quantized + "'");
  const int64_t images = c.limit > 0 ? std::min(c.limit, test.size()) : test.size();
  const int64_t classes = model.num_classes();
  const std::unique_ptr<Engine> engine = make_engine(model, c.backend);
  const std::vector<float>& logit_scale = model.quant[model.output()].logit_scale.data;

  std::vector<std::vector<int32_t>> int8_outputs(static_cast<size_t>(outputs));
  std::vector<std::vector<float>> float_outputs;
  std::unique_ptr<FloatExecutor> float_model;
  if (!c.checkpoint.empty()) {
    const Checkpoint checkpoint = load_checkpoint(c.checkpoint);
    check_quantized_from(model, "'" + c.quantized + "'", checkpoint, "'" + c.checkpoint + "'");
    float_model = std::make_unique<FloatExecutor>(fold_for_inference(checkpoint.graph, checkpoint.params));
    float_outputs.resize(static_cast<size_t>(outputs));
  }
  for (int64_t first = 0; first < images; first += kBatch) {
    const int64_t n = std::min(kBatch, images - first);
    const std::vector<float> x = normalized_images(test, model.mean, model.std, first, n);
    const std::vector<Int32Tensor> logits = engine->run_outputs(x.data(), n);
    for (size_t k = 0; k < int8_outputs.size(); ++k)
      int8_outputs[k].insert(int8_outputs[k].end(), logits[k].data.begin(), logits[k].data.end());
    if (float_model) {
      const std::vector<FloatTensor> f = float_model->run_outputs(x.data(), n);
      for (size_t k = 0; k < float_outputs.size(); ++k)
        float_outputs[k].insert(float_outputs[k].end(), f[k].data.begin(), f[k].data.end());
    }
  }
  std::FILE* summary = report_stream(c.json);  // with --json - the JSON owns standard output
  nlohmann::json written;
  if (!c.outputs.empty()) {
    written = write_outputs(c.outputs, model, images, int8_outputs, float_outputs);
    std::fprintf(summary, "%zu output%s of %lld images (float32 .npy, as PyTorch returns them) written to %s\n",
                 model_out.size(), model_out.size() == 1 ? "" : "s", static_cast<long long>(images),
                 c.outputs.c_str());
  }
  if (!classes_out) {
    const nlohmann::json json = {{"quantized", c.quantized}, {"model", model.model},   {"backend", engine->backend()},
                                 {"images", images},         {"outputs", written}};
    if (!c.json.empty()) write_text_output(c.json, json.dump() + "\n");
    return;
  }
  const std::vector<int32_t>& int8_logits = int8_outputs.back();
  const std::vector<float> no_float_logits;
  const std::vector<float>& float_logits = float_model ? float_outputs.back() : no_float_logits;

  LabelScores int8_scores(classes), float_scores(classes);
  const std::vector<int64_t> int8_predictions = predicted_classes(int8_logits, logit_scale, test, &int8_scores);
  // Per pixel: class maps [N][H][W] in the JSON, the logits left out (the Python module's predict returns them).
  const auto predictions_json = [&](const std::vector<int64_t>& p) {
    return rows == 1 ? nlohmann::json(p) : nested_rows(p, out.w, out.h);
  };
  const auto logits_json = [&](const auto& logits) {
    return rows == 1 ? nested_rows(logits, classes) : nlohmann::json();
  };
  nlohmann::json labels;
  if (test.labelled())
    labels = predictions_json(std::vector<int64_t>(test.labels.begin(), test.labels.begin() + images * rows));
  nlohmann::json json = {{"quantized", c.quantized},
                         {"model", model.model},
                         {"dataset", model.dataset},
                         {"backend", engine->backend()},
                         {"images", images},
                         {"files", test.files.empty() ? nlohmann::json()
                                                      : nlohmann::json(std::vector<std::string>(
                                                            test.files.begin(), test.files.begin() + images))},
                         {"predictions_per_image", rows},
                         {"labels", labels},
                         {"logit_scale", logit_scale},
                         {"int8_logits", logits_json(int8_logits)},
                         {"int8_predictions", predictions_json(int8_predictions)}};
  auto top1 = [&](double v) { return test.labelled() ? nlohmann::json(v) : nlohmann::json(); };  // null: no labels
  json["int8_top1"] = top1(int8_scores.top1());
  if (!c.outputs.empty()) json["outputs"] = written;
  const char* accuracy = rows == 1 ? "top-1" : "pixel accuracy";
  std::fprintf(summary, "images %lld%s on %s", static_cast<long long>(images), test.labelled() ? "" : " (no labels)",
               engine->backend().c_str());
  if (test.labelled()) std::fprintf(summary, "   int8 %s %.2f%%", accuracy, int8_scores.top1());
  if (float_model) {
    const std::vector<int64_t> float_predictions =
        predicted_classes(float_logits, std::vector<float>(static_cast<size_t>(classes), 1.0f), test, &float_scores);
    json["checkpoint"] = c.checkpoint;
    json["float_logits"] = logits_json(float_logits);
    json["float_predictions"] = predictions_json(float_predictions);
    json["float_top1"] = top1(float_scores.top1());
    if (test.labelled()) std::fprintf(summary, "   float %s %.2f%%", accuracy, float_scores.top1());
  }
  std::fprintf(summary, "\n");
  if (!c.class_map.empty()) {
    const std::vector<int64_t> shape = {images, out.h, out.w};
    const std::vector<uint8_t> bytes = npy_bytes("<i8", shape, int8_predictions.data());
    write_file_atomically(c.class_map, [&](std::ostream& o) {
      o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    });
    std::fprintf(summary, "class maps (int8, %lld x %d x %d, int64) written to %s\n", static_cast<long long>(images),
                 out.h, out.w, c.class_map.c_str());
  }
  if (!c.json.empty()) write_text_output(c.json, json.dump() + "\n");
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
  cmd->add_option("--class-map", c->class_map,
                  "A model returning an image of logits: write its int8 class maps (N x H x W int64) to this .npy");
  cmd->add_option("--outputs", c->outputs,
                  "Write each output's values to this folder as float32 .npy files as PyTorch returns them (NCHW; a "
                  "detection head's rows): int8_output0.npy, ... (the int32 logits dequantized), with --checkpoint "
                  "float_output0.npy, ...; a model of several outputs (or of detection rows) is predicted only so");
  add_json_option(cmd, c->json,
                  "labels, logits and predictions (class maps of a model predicting per pixel), and a folder's image "
                  "files in their order");
  cmd->callback([c] { run_predict(*c); });
}

}  // namespace octet
