// A training record (models/training_record.h) read for a forecast: how many
// steps each epoch took and how long, which turns forecast steps into wall
// time, and the warm-up a fit should start after.
#pragma once

#include <optional>
#include <string>

#include "forecast/step_log.h"
#include "models/training_record.h"

namespace octet {

struct TrainRecord {
  std::string path;
  TrainingRecord training;
  // Seconds per step over the epochs that ended by `last_step` (the first epoch
  // when none did): what a partial run knows of its speed.
  double seconds_per_step(double last_step) const;
  double steps_per_epoch() const;  // of the first epoch
  double warmup_steps() const { return training.options.warmup_epochs * steps_per_epoch(); }
};

// Refuses, naming the file and the field, a record octet train did not write,
// and one without a finished epoch.
TrainRecord read_train_record(const std::string& path);

// The record next to a step log (x.csv -> x.json) when octet train wrote one;
// an epoch record is its own.
std::optional<TrainRecord> record_beside(const std::string& log_path);

// The record's epochs as a coarse step log: one row per epoch at its last step,
// with the epoch's mean training loss and accuracy. Long runs kept without a
// step log (models/zoo/*.json) can be fitted this way.
StepLog epoch_log(const TrainRecord& record);

// A step log, or an epoch record (.json) read as one point per epoch.
StepLog read_curve_source(const std::string& path);

}  // namespace octet
