// The per-step training losses of a `bench train` run, from the step log its
// `octet train` writes (--step-log: CSV epoch,step,loss,acc), for the loss
// plots: per-epoch means alone hide how (and when) a run diverges.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace octet {

struct StepLoss {
  double epochs = 0;  // epochs done after the step: epoch - 1 + its share of that epoch's steps
  double loss = 0;    // NaN where the run diverged (forecast's step-log reader refuses those)
};

// The rows of step log `csv`; `training` (the run's `octet train --json`
// document) gives each epoch's step count. Fails naming `path` and the line.
std::vector<StepLoss> parse_step_losses(const std::string& csv, const nlohmann::json& training,
                                        const std::string& path);
std::vector<StepLoss> read_step_losses(const std::string& path, const nlohmann::json& training);

// Means of about `points` windows of consecutive steps (a step's loss is one
// batch's: noisy); a window with a non-finite loss gives NaN.
std::vector<StepLoss> window_means(const std::vector<StepLoss>& steps, size_t points);

}  // namespace octet
