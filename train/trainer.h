// `octet train`: trains a registry model on a dataset and reports, per epoch,
// what the course labs measured: loss, top-1, data-loading time (waiting for
// the next batch), compute time (forward + backward + step, synchronised on
// CUDA), epoch time and test top-1.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "train/options.h"

namespace octet {

struct EpochStats {
  int epoch = 0;
  int64_t steps = 0;
  double lr = 0;
  double train_loss = 0, train_top1 = 0;
  double data_seconds = 0, compute_seconds = 0, epoch_seconds = 0;
  double test_loss = 0, test_top1 = 0, eval_seconds = 0;
  // Data-parallel runs: time the step waited for gradient all-reduces (the part
  // not hidden behind the backward pass) and the bytes this rank all-reduced.
  double communication_seconds = 0;
  int64_t allreduce_bytes = 0;
  int64_t skipped_steps = 0;  // amp-fp16: steps skipped because the gradients overflowed
};

struct TrainReport {
  std::vector<EpochStats> epochs;
  double total_data_seconds = 0, total_compute_seconds = 0, total_seconds = 0;
  double total_communication_seconds = 0;  // data-parallel: excluded from total_compute_seconds
  double final_test_top1 = 0;
  int64_t parameters = 0;
  int world_size = 1;  // data-parallel processes (1: not distributed)
};

// Runs the training; progress and one summary line per epoch go to `log`.
TrainReport train(const TrainOptions& options, std::ostream& log);

std::string to_json(const TrainOptions& options, const TrainReport& report);

}  // namespace octet
