// Command-line options shared by several subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/error.h"
#include "quant/pipeline.h"

namespace octet {

// --data: the folder holding the dataset files themselves (.bin or IDX files).
inline void add_data_option(CLI::App* cmd, std::string& dir) {
  cmd->add_option("--data", dir, "Folder holding the dataset files (default: the dataset's Debian folder)");
}

// --json FILE ('-': standard output); `what` says what is written.
inline void add_json_option(CLI::App* cmd, std::string& path, const std::string& what = "the results") {
  cmd->add_option("--json", path, "Write " + what + " as JSON to FILE ('-': standard output)");
}

inline void add_quantize_options(CLI::App* cmd, NamedQuantizeOptions& q) {
  cmd->add_option("--method", q.method,
                  "Activation amax: max, sigma3, percentile, entropy, mse or auto (per tensor, the best of max, "
                  "percentile, entropy and mse on the int8 runtime)")
      ->capture_default_str();
  cmd->add_option("--granularity", q.granularity, "Weight scales: per-channel or per-tensor")->capture_default_str();
  cmd->add_option("--scheme", q.scheme, "octet, or lab (the course lab's weight step (max - min) / 127)")
      ->capture_default_str();
  cmd->add_option("--weight-rounding", q.weight_rounding,
                  "gptq (error-compensating, default) or nearest")
      ->capture_default_str();
  cmd->add_option("--percentile", q.percentile, "Quantile for --method percentile")->capture_default_str();
  cmd->add_option("--calib-samples", q.calibration_samples, "Calibration images from the training split")
      ->capture_default_str();
  cmd->add_option("--auto-samples", q.auto_samples, "Calibration images --method auto scores its choices on")
      ->capture_default_str();
}

}  // namespace octet
