#include "train/run_record.h"

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "train/trainer.h"

namespace octet {

RecordedOptions recorded_options(const TrainOptions& o) {
  RecordedOptions r;
  r.model = o.model;
  r.dataset = o.dataset;
  r.epochs = o.epochs;
  r.batch_size = o.batch_size;
  r.optimizer = o.optimizer.name;
  r.lr = o.optimizer.lr;
  r.momentum = o.optimizer.momentum;
  r.weight_decay = o.optimizer.weight_decay;
  r.schedule = o.schedule;
  r.warmup_epochs = o.warmup_epochs;
  r.batch_norm = o.batch_norm;
  r.augment = o.augment && o.dataset == "cifar10";
  r.device = o.device;
  r.precision = o.precision;
  r.channels_last = o.channels_last;
  r.cuda_graph = o.cuda_graph;
  r.allreduce = o.allreduce;
  r.bucket_mb = o.bucket_mb;
  r.workers = o.workers;
  r.threads = o.threads;
  r.seed = o.seed;
  r.test_samples = o.test_limit;
  r.init = o.init;
  return r;
}

TrainReport resumed_report(const TrainOptions& o, const Checkpoint& checkpoint) {
  const std::string where = "--resume " + o.resume + ": ";
  TrainingRecord record;
  try {
    record = parse_training_record(checkpoint.training_json);
  } catch (const nlohmann::json::exception& e) {
    fail(where + "the checkpoint's training record is not one octet train wrote (" + e.what() + ")");
  }
  const RecordedOptions& recorded = record.options;
  const auto expect = [&](const nlohmann::json& was, const nlohmann::json& value, const char* option) {
    check(was == value, where + "checkpoint was trained with " + option + " " + was.dump() + ", this run asks for " +
                            value.dump());
  };
  expect(recorded.epochs, o.epochs, "--epochs");
  expect(recorded.batch_size, o.batch_size, "--batch-size");
  expect(recorded.optimizer, o.optimizer.name, "--optimizer");
  expect(recorded.lr, o.optimizer.lr, "--lr");
  expect(recorded.schedule, o.schedule, "--schedule");
  expect(recorded.seed, o.seed, "--seed");
  check(recorded.init == o.init,
        where + "checkpoint's run started from --init '" + recorded.init + "', this run from '" + o.init + "'");
  // Its epochs and totals; the parameter count and the world size are this run's.
  const TrainReport& done = record.results;
  TrainReport report;
  report.epochs = done.epochs;
  report.total_data_seconds = done.total_data_seconds;
  report.total_compute_seconds = done.total_compute_seconds;
  report.total_communication_seconds = done.total_communication_seconds;
  report.total_seconds = done.total_seconds;
  report.final_test_top1 = done.final_test_top1;
  return report;
}

std::string to_json(const TrainOptions& o, const TrainReport& r) {
  return training_record_json({recorded_options(o), r});
}

}  // namespace octet
