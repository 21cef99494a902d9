#include "forecast/train_record.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"

namespace octet {

double TrainRecord::seconds_per_step(double last_step) const {
  double steps = 0, seconds = 0;
  for (const EpochStats& e : training.results.epochs) {
    if (steps > 0 && steps + static_cast<double>(e.steps) > last_step) break;
    steps += static_cast<double>(e.steps);
    seconds += e.epoch_seconds;
  }
  return seconds / steps;
}

double TrainRecord::steps_per_epoch() const { return static_cast<double>(training.results.epochs.front().steps); }

TrainRecord read_train_record(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), "cannot read training record '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  TrainRecord record;
  record.path = path;
  try {
    record.training = parse_training_record(text.str());
  } catch (const nlohmann::json::exception& e) {
    fail(path + ": not a training record written by octet train --json (" + e.what() + ")");
  }
  for (const EpochStats& e : record.training.results.epochs)
    check(e.steps > 0 && e.epoch_seconds > 0,
          path + ": epoch " + std::to_string(e.epoch) + " has no steps or no time, not a finished epoch");
  check(!record.training.results.epochs.empty(), path + ": the training record holds no finished epoch");
  return record;
}

StepLog epoch_log(const TrainRecord& record) {
  StepLog log;
  log.path = record.path;
  long long step = 0;
  for (const EpochStats& e : record.training.results.epochs) {
    step += e.steps;
    check(std::isfinite(e.train_loss) && e.train_loss >= 0,
          record.path + ": epoch " + std::to_string(e.epoch) + " has a training loss that is not a finite number >= 0");
    log.rows.push_back({e.epoch, step, e.train_loss, e.train_top1});
  }
  return log;
}

}  // namespace octet
