// `octet train`: trains a registry model on a dataset and reports, per epoch,
// what the course labs measured: loss, top-1, data-loading time (waiting for
// the next batch), compute time (forward + backward + step, synchronised on
// CUDA), epoch time and test top-1.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/registry.h"
#include "train/optimizer.h"

namespace octet {

struct TrainOptions {
  std::string model = "lenet5";
  std::string dataset = "fashion-mnist";
  std::string data_dir;  // empty: the dataset's default folder
  int epochs = 10;
  int batch_size = 128;
  OptimizerOptions optimizer;
  std::string schedule = "cosine";  // constant, multistep, cosine
  std::vector<double> milestones = {0.5, 0.75};  // multistep: fractions of the run, lr x 0.1 at each
  double warmup_epochs = 0;                      // linear warm-up from lr/10
  bool batch_norm = true;
  bool augment = true;  // CIFAR-10 only: random crop + flip
  std::string device = "cpu";
  int workers = 0;
  int threads = 0;  // 0: all cores
  uint64_t seed = 1;
  bool drop_last = false;
  int64_t train_limit = 0;  // use only the first N training samples (0: all)
  int64_t max_steps = 0;    // stop after N optimizer steps in total (0: no limit)
  std::string checkpoint;   // written after every epoch (atomically)
  // Continue an interrupted run from a checkpoint this trainer wrote: weights,
  // finished epochs and their statistics are taken from it. Optimizer state
  // (momentum, Adam moments) is not stored in checkpoints and restarts at zero.
  std::string resume;
  // Start from the weights of a checkpoint (same model, dataset and batch-norm
  // flag) with this run's own schedule: fine-tuning or a warm restart. Resuming
  // such a run repeats its --init, which is then only checked.
  std::string init;
  std::string step_log;     // CSV epoch,step,loss,acc
  std::string json;         // all results as JSON ("-" for standard output)
};

struct EpochStats {
  int epoch = 0;
  int64_t steps = 0;
  double lr = 0;
  double train_loss = 0, train_top1 = 0;
  double data_seconds = 0, compute_seconds = 0, epoch_seconds = 0;
  double test_loss = 0, test_top1 = 0, eval_seconds = 0;
};

struct TrainReport {
  std::vector<EpochStats> epochs;
  double total_data_seconds = 0, total_compute_seconds = 0, total_seconds = 0;
  double final_test_top1 = 0;
  int64_t parameters = 0;
};

// Model options for a dataset's images and classes.
ModelOptions model_options_for(const std::string& dataset, bool batch_norm);

// Runs the training; progress and one summary line per epoch go to `log`.
TrainReport train(const TrainOptions& options, std::ostream& log);

std::string to_json(const TrainOptions& options, const TrainReport& report);

}  // namespace octet
