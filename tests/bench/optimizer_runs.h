// The records of a short `octet bench train optimizers` run without training
// anything: nine runs whose loss falls from 2.3, and adam at lr 0.1 diverging
// to NaN after its loss reaches about 80. For the summary's tests and the
// plots opened in Chromium.
#pragma once

#include <vector>

#include "bench/train_summary.h"

namespace octet {

BenchTrainOptions optimizers_options();

// `with_step_logs`: each run has per-step losses, as `bench train` now
// records them; without, only its per-epoch means.
std::vector<RunRecord> optimizer_runs(bool with_step_logs);

}  // namespace octet
