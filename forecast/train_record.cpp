#include "forecast/train_record.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "common/file_io.h"
#include "common/strings.h"

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

std::optional<TrainRecord> record_beside(const std::string& log_path) {
  const size_t dot = log_path.rfind('.');
  const std::string path = (dot == std::string::npos ? log_path : log_path.substr(0, dot)) + ".json";
  if (!file_exists(path)) return std::nullopt;
  return read_train_record(path);
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

StepLog read_curve_source(const std::string& path) {
  const bool record = ends_after(path, ".json");
  return record ? epoch_log(read_train_record(path)) : read_step_log(path);
}

}  // namespace octet
