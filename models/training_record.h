// The record `octet train` keeps of a run: the options that shaped it, every
// finished epoch's figures and the run's totals. `octet train --json` writes
// it, and so does every checkpoint the trainer saves (Checkpoint::training_json);
// `octet train --resume` (train/) and `octet forecast` (forecast/) read it.
// One reader and one writer, below both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// The trainer's options as they shaped the run (`augment`: whether it took
// effect, which it does on CIFAR-10 only).
struct RecordedOptions {
  std::string model, dataset;
  int epochs = 0, batch_size = 0;
  std::string optimizer;
  double lr = 0, momentum = 0, weight_decay = 0;
  std::string schedule;
  double warmup_epochs = 0;
  bool batch_norm = true, augment = false;
  std::string device, precision;
  bool channels_last = false, cuda_graph = false;
  std::string allreduce;
  double bucket_mb = 0;
  int workers = 0, threads = 0;
  uint64_t seed = 0;
  int64_t test_samples = 0;
  std::string init;  // the checkpoint the run started from ("": none)
};

struct TrainingRecord {
  RecordedOptions options;
  TrainReport results;
};

// The record as JSON, indented by 2.
std::string training_record_json(const TrainingRecord& record);

// Reads a record octet train wrote. The fields every record has are required;
// those later versions added (the warm-up, the data-parallel figures, ...)
// default to what a run without them did. Throws nlohmann::json::exception
// naming a missing or mistyped field, or when `json` is no JSON.
TrainingRecord parse_training_record(const std::string& json);

}  // namespace octet
