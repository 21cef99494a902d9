// `octet train`: trains a registry model on a dataset and reports, per epoch,
// what the course labs measured: loss, top-1, data-loading time (waiting for
// the next batch), compute time (forward + backward + step, synchronised on
// CUDA), epoch time and test top-1.
#pragma once

#include <ostream>
#include <string>

#include "models/training_record.h"
#include "train/options.h"

namespace octet {

// Runs the training; progress and one summary line per epoch go to `log`.
TrainReport train(const TrainOptions& options, std::ostream& log);

// The run's training record as JSON (train/run_record.cpp).
std::string to_json(const TrainOptions& options, const TrainReport& report);

}  // namespace octet
