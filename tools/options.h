// Command-line options shared by several subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.h"
#include "data/user_data.h"
#include "quant/accuracy_target.h"
#include "quant/pipeline.h"
#include "runtime/engine.h"

namespace octet {

// --data: the folder holding the dataset files themselves (.bin or IDX files).
inline void add_data_option(CLI::App* cmd, std::string& dir) {
  cmd->add_option("--data", dir, "Folder holding the dataset files (default: the dataset's Debian folder)");
}

// Where a command's images come from: --data (the checkpoint's dataset), or
// the user's own images for calibration and evaluation (data/user_data.h)
// with how a folder's images become the model's input. tools/data_options.cpp.
struct DataArgs {
  std::string dir;                      // --data
  std::string calib, eval, eval_labels;  // --calib-data, --eval-data, --eval-labels
  std::string calib_list, eval_list;     // --calib-list, --eval-list
  std::string image_suffix, mask_suffix;  // --image-suffix, --mask-suffix
  int resize = 0, crop = 0;             // --resize, --crop
  std::vector<float> mean, std;         // --mean, --std
  std::string preprocess;               // --preprocess imagenet

  // The images to read, with --preprocess's values where no option of its own
  // was given; fails on options that do not go together.
  DataOptions data() const;
  // --mean/--std (or --preprocess's) when given become the normalisation of a
  // model's input (`mean`, `std`: the checkpoint's or the quantized model's,
  // named `whose` in messages) when that model has none (mean 0, std 1), and
  // must equal it otherwise.
  void normalise(std::vector<float>* mean, std::vector<float>* std, const std::string& whose) const;
};

enum DataUses { kDatasetFolder = 1, kCalibrationData = 2, kEvaluationData = 4 };
// The options of `uses`: --data, the user's calibration images, the user's
// test images; --resize, --crop, --mean, --std, --preprocess with either.
void add_data_options(CLI::App* cmd, DataArgs& args, int uses);

// --json FILE ('-': standard output); `what` says what is written.
inline void add_json_option(CLI::App* cmd, std::string& path, const std::string& what = "the results") {
  cmd->add_option("--json", path, "Write " + what + " as JSON to FILE ('-': standard output)");
}

// The backends of this build, from the registry (runtime/engine.h): "cpu, cuda-imma, ...".
inline std::string backend_names_list() {
  std::string names;
  for (const std::string& b : engine_backend_names()) names += (names.empty() ? "" : ", ") + b;
  return names;
}

// --backend NAME: the int8 runtime backend that runs the quantized model.
inline void add_backend_option(CLI::App* cmd, std::string& backend) {
  std::string help = "Int8 runtime backend: " + backend_names_list();
  if (engine_backend_names().size() > 1) help += ", or " + std::string(backend_names::kCudaDefault) + " (the GPU's default)";
  cmd->add_option("--backend", backend, help)->capture_default_str();
}

inline void add_quantize_options(CLI::App* cmd, NamedQuantizeOptions& q) {
  const std::string budget = std::to_string(static_cast<int>(kFullDefaultsMacs / 1e9)) + " G multiply-adds";
  cmd->add_option("--method", q.method,
                  "Activation amax: max, sigma3, percentile, entropy, mse, auto (per tensor, the best of max, "
                  "percentile, entropy and mse on the int8 runtime) or auto-global (mse or percentile for every "
                  "tensor, the better of the two int8 models). Default: auto, or auto-global where the calibration "
                  "pass exceeds " + budget + " (ResNet-18 on 1024 images: 569 G), where auto and gptq take "
                  "over 4x its time");
  cmd->add_option("--granularity", q.granularity, "Weight scales: per-channel or per-tensor")->capture_default_str();
  cmd->add_option("--scheme", q.scheme, "octet, or lab (the course lab's weight step (max - min) / 127)")
      ->capture_default_str();
  cmd->add_option("--weight-rounding", q.weight_rounding,
                  "gptq (error-compensating) or nearest. Default: gptq, or nearest where the calibration pass "
                  "exceeds " + budget + " (as --method)");
  cmd->add_option("--percentile", q.percentile, "Quantile for --method percentile")->capture_default_str();
  cmd->add_option("--calib-samples", q.calibration_samples,
                  "Calibration images, evenly spaced over the training split (or --calib-data)")
      ->capture_default_str();
  cmd->add_option("--auto-samples", q.auto_samples,
                  "Calibration images --method auto (and auto-global) ranks by how unsure float is of them; it "
                  "scores its choices on the 512 most unsure")
      ->capture_default_str();
  cmd->add_option("--float-nodes", q.float_nodes,
                  "Nodes to keep in float (mixed precision; comma-separated names, as `octet summary` lists them): "
                  "each reads its inputs dequantized and quantizes its output; the cpu backend runs such a model")
      ->delimiter(',');
  cmd->add_flag("--equalize", q.equalize,
                "Cross-layer equalization before calibration: each conv read only by another conv (through nothing "
                "or ReLU; a ReLU6 there becomes ReLU) has its output channels' weight ranges balanced with the "
                "reader's input channels' (Nagel et al. 2019): for per-tensor weights of depthwise networks");
  cmd->add_flag("--bias-correction", q.bias_correction,
                "Subtract from each conv's and linear's bias the mean shift its int8 weights' rounding causes, "
                "from the calibration images' channel means (Nagel et al. 2019)");
  cmd->add_option("--activations", q.activations,
                  "signed: every activation int8 (zero point 0); unsigned: a tensor that cannot be negative (a "
                  "ReLU's output, a sigmoid's, and pools, moves and concats of them) stored as uint8, a step half "
                  "as wide (zero point -128 in int8's bytes); the cpu backend runs such a model. Default: "
                  "unsigned, signed with --scheme lab");
  cmd->add_option("--wide-bits", q.wide_bits,
                  "Up to this many bits (9-16, stored as int16) for every signed conv output read only by dense "
                  "convs (MobileNetV2's residual stream), fewer where a reader sums too many values for int32; 8: "
                  "every activation 8-bit. Only the cpu backend runs such a model (the ONNX export rounds them in "
                  "float). Default: 16, 8 with --scheme lab");
}

// q.options(checkpoint), saying on standard error when the network's size
// chose auto-global amax or nearest rounding for an option the user did not name.
inline QuantizeOptions quantize_options_for(const NamedQuantizeOptions& q, const Checkpoint& checkpoint,
                                            const std::string& path) {
  const QuantizeOptions o = q.options(checkpoint);
  if (q.large_network_defaults(checkpoint))
    std::fprintf(stderr,
                 "note: '%s' takes %.0f G multiply-adds over the %lld calibration images, above the %.0f G up to "
                 "which the defaults search amax (auto) and round with GPTQ: --method %s --weight-rounding %s (name "
                 "--method auto and --weight-rounding gptq for both, at over 4x the time)\n",
                 path.c_str(), calibration_macs(checkpoint.graph, q.calibration_samples) / 1e9,
                 static_cast<long long>(q.calibration_samples), kFullDefaultsMacs / 1e9, amax_method_name(o.method),
                 o.weight_rounding.c_str());
  return o;
}

// An accuracy target (quant/accuracy_target.h): --min-agreement, --max-drop, --val-samples.
struct TargetArgs {
  AccuracyTarget target;
  int64_t validation_samples = 1000;
};

// The target's search from the all-int8 model `r` on the validation images of
// `data` (training images between the `calibration_samples` calibration ones).
inline TargetResult reach_target(const QuantizeResult& r, const Checkpoint& checkpoint, const DataOptions& data,
                                 const TargetArgs& t, int64_t calibration_samples,
                                 bool always_measure_sensitivity = false) {
  const IndexPicker validation_split = [&](int64_t size) {
    return validation_indices(size, t.validation_samples, calibration_samples);
  };
  return quantize_to_target(r.model, r.folded, load_validation_images(model_input(checkpoint), data, validation_split),
                            t.target, always_measure_sensitivity);
}

inline void add_target_options(CLI::App* cmd, TargetArgs& t) {
  cmd->add_option("--min-agreement", t.target.min_agreement,
                  "Accuracy target: int8 must agree with float on at least this percentage of validation images "
                  "(training images other than the calibration ones); layers that cost most in int8 are kept in "
                  "float until it does. Not met: the closest model is written and the exit status is 3")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--max-drop", t.target.max_drop,
                  "Accuracy target: int8 top-1 at most this many points below float's on the validation images "
                  "(needs labelled calibration images), as --min-agreement")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--val-samples", t.validation_samples, "Validation images of an accuracy target")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

}  // namespace octet
