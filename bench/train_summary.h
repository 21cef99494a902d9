// From the training records of a scenario's runs to its table, notes and
// plot (torch-free: the records are `octet train --json` documents).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/step_losses.h"
#include "bench/train_plan.h"
#include "bench/train_table.h"

namespace octet {

struct RunRecord {
  PlannedRun run;
  std::string status;  // "" when it ran, else "skipped: why" or "failed: why"
  nlohmann::json training;  // the run's `octet train --json` document
  std::vector<StepLoss> step_losses;  // from its step log; empty where it wrote none
};

// `train_images`: the training images of one epoch (after --train-samples).
ResultTable summarize_scenario(const BenchTrainOptions& o, const std::vector<RunRecord>& records, int64_t train_images);

// scaling: `p,w,seconds` per strong-scaling run (seconds per step at a fixed
// global batch), the file `octet forecast speed --step-times` reads. With an
// all-reduce there are no parameter servers: every rank holds a shard, so p = w.
std::string step_times_csv(const ResultTable& scaling);

}  // namespace octet
