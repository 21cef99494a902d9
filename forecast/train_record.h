// The epoch record `octet train --json` writes: how many steps each epoch took
// and how long, which turns forecast steps into wall time.
#pragma once

#include <string>
#include <vector>

#include "forecast/step_log.h"

namespace octet {

struct EpochTiming {
  int epoch = 0;
  long long steps = 0;
  double seconds = 0;  // data loading + compute, without the test-set evaluation
  double test_top1 = 0;
  double train_loss = 0;  // the epoch's mean mini-batch loss
  double train_top1 = 0;  // percent
};

struct TrainRecord {
  std::string path, model, dataset, device;
  double warmup_epochs = 0;  // the linear learning-rate warm-up (--warmup-epochs)
  std::vector<EpochTiming> epochs;
  // Seconds per step over the epochs that ended by `last_step` (the first epoch
  // when none did): what a partial run knows of its speed.
  double seconds_per_step(double last_step) const;
  double steps_per_epoch() const;  // of the first epoch
  double warmup_steps() const { return warmup_epochs * steps_per_epoch(); }
};

// Refuses, naming the file and the field, a record octet train did not write.
TrainRecord read_train_record(const std::string& path);

// The record's epochs as a coarse step log: one row per epoch at its last step,
// with the epoch's mean training loss and accuracy. Long runs kept without a
// step log (models/zoo/*.json) can be fitted this way.
StepLog epoch_log(const TrainRecord& record);

}  // namespace octet
