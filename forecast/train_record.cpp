#include "forecast/train_record.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"

namespace octet {

double TrainRecord::seconds_per_step(double last_step) const {
  double steps = 0, seconds = 0;
  for (const EpochTiming& e : epochs) {
    if (steps > 0 && steps + static_cast<double>(e.steps) > last_step) break;
    steps += static_cast<double>(e.steps);
    seconds += e.seconds;
  }
  return seconds / steps;
}

double TrainRecord::steps_per_epoch() const { return static_cast<double>(epochs.front().steps); }

TrainRecord read_train_record(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), "cannot read training record '" + path + "'");
  TrainRecord record;
  record.path = path;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    const nlohmann::json& options = j.at("options");
    record.model = options.at("model");
    record.dataset = options.at("dataset");
    record.device = options.at("device");
    record.warmup_epochs = options.value("warmup_epochs", 0.0);  // older records ran without a warm-up
    for (const nlohmann::json& e : j.at("epochs")) {
      EpochTiming t;
      t.epoch = e.at("epoch");
      t.steps = e.at("steps");
      t.seconds = e.at("epoch_seconds");
      t.test_top1 = e.at("test_top1");
      t.train_loss = e.at("train_loss");
      t.train_top1 = e.at("train_top1");
      check(t.steps > 0 && t.seconds > 0,
            path + ": epoch " + std::to_string(t.epoch) + " has no steps or no time, not a finished epoch");
      record.epochs.push_back(t);
    }
  } catch (const nlohmann::json::exception& e) {
    fail(path + ": not a training record written by octet train --json (" + e.what() + ")");
  }
  check(!record.epochs.empty(), path + ": the training record holds no finished epoch");
  return record;
}

StepLog epoch_log(const TrainRecord& record) {
  StepLog log;
  log.path = record.path;
  long long step = 0;
  for (const EpochTiming& e : record.epochs) {
    step += e.steps;
    check(std::isfinite(e.train_loss) && e.train_loss >= 0,
          record.path + ": epoch " + std::to_string(e.epoch) + " has a training loss that is not a finite number >= 0");
    log.rows.push_back({e.epoch, step, e.train_loss, e.train_top1});
  }
  return log;
}

}  // namespace octet
