// `octet pipeline`: the main job in one command. Train a float model (or take
// a checkpoint), calibrate, quantize, and compare int8 with float.
#include <cstdio>
#include <iostream>

#include "common/error.h"
#include "common/file_io.h"
#include "evaluate/evaluate.h"
#include "quant/pipeline.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#include "train/options.h"
#ifdef OCTET_HAVE_TORCH
#include "train/trainer.h"
#endif

namespace octet {

namespace {
struct PipelineCommand {
  TrainOptions train;
  std::string checkpoint, out_dir = "out", json;
  DataArgs data;  // the user's images (--data is the training's)
  NamedQuantizeOptions q;
};

void run_pipeline(PipelineCommand c) {
  std::FILE* out = report_stream(c.json);
#ifndef OCTET_HAVE_TORCH
  if (c.checkpoint.empty()) use_torch_helper();
  check(!c.checkpoint.empty(), std::string(kTrainingNeedsTorch) + " (octet pipeline --checkpoint FILE)");
#endif
  c.data.dir = c.train.data_dir;
  const DataOptions data = c.data.data();
  check(!c.checkpoint.empty() || (data.calib.empty() && data.eval.empty()),
        "octet pipeline trains on a built-in dataset; with your own images, start from a checkpoint (--checkpoint, "
        "e.g. from octet import model.onnx)");
  make_directories(c.out_dir);
  if (c.checkpoint.empty()) {
    c.checkpoint = c.out_dir + "/" + c.train.model + "_" + c.train.dataset + ".octet";
    c.train.checkpoint = c.checkpoint;
    std::fprintf(out, "== 1/3 train %s on %s (%d epochs) -> %s\n", c.train.model.c_str(), c.train.dataset.c_str(),
                c.train.epochs, c.checkpoint.c_str());
    std::fflush(out);
#ifdef OCTET_HAVE_TORCH
    train(c.train, out == stderr ? std::cerr : std::cout);
#endif
  } else {
    std::fprintf(out, "== 1/3 take checkpoint %s\n", c.checkpoint.c_str());
  }
  Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  c.data.normalise(&checkpoint.mean, &checkpoint.std, "'" + c.checkpoint + "'");
  const std::string quantized_path = c.out_dir + "/" + checkpoint.model + "_" + checkpoint.dataset + ".int8.octet";
  const QuantizeOptions options = quantize_options_for(c.q, checkpoint, c.checkpoint);
  std::fprintf(out, "== 2/3 calibrate (%lld images) and quantize (%s, %s) -> %s\n",
              static_cast<long long>(c.q.calibration_samples), amax_method_name(options.method),
              c.q.granularity.c_str(), quantized_path.c_str());
  std::fflush(out);
  const QuantizeResult r = quantize_checkpoint(checkpoint, data, options, c.q.calibration_samples);
  save_quantized_model(r.model, quantized_path);
  std::fprintf(out, "== 3/3 compare int8 with float on %s\n",
               data.eval.empty() ? ("the " + checkpoint.dataset + " test set").c_str() : data.eval.path.c_str());
  std::fflush(out);
  const Dataset test = load_evaluation_images(model_input(checkpoint), data);
  const EvalReport report = evaluate(FloatExecutor(r.folded), *make_engine(r.model, backend_names::kCpu), test, 0, true);
  std::fprintf(out, "%s", eval_report_table(report).c_str());
  if (!c.json.empty()) write_text_output(c.json, eval_report_json(report) + "\n");
}
}  // namespace

void add_pipeline_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "pipeline", "Train (or take a checkpoint), calibrate, quantize and compare int8 with float");
  auto c = std::make_shared<PipelineCommand>();
  c->train.epochs = 10;
  c->train.optimizer.lr = 0.05;
  cmd->add_option("--checkpoint", c->checkpoint, "Start from this checkpoint instead of training");
  cmd->add_option("--model", c->train.model, "Model to train")->capture_default_str();
  cmd->add_option("--dataset", c->train.dataset, "Dataset")->capture_default_str();
  cmd->add_option("--data", c->train.data_dir, "Folder holding the dataset files");
  cmd->add_option("--epochs", c->train.epochs, "Training epochs")->capture_default_str();
  cmd->add_option("--lr", c->train.optimizer.lr, "Learning rate (SGD, cosine schedule)")->capture_default_str();
  cmd->add_option("--threads", c->train.threads, "LibTorch threads for training (0: all cores)");
  add_data_options(cmd, c->data, kCalibrationData | kEvaluationData);
  add_quantize_options(cmd, c->q);
  cmd->add_option("--out", c->out_dir, "Folder for the checkpoint and the quantized model")->capture_default_str();
  add_json_option(cmd, c->json, "the comparison");
  cmd->callback([c] { run_pipeline(*c); });
}

}  // namespace octet
