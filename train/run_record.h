// The trainer's side of the training record (models/training_record.h): the
// options it records of a run, and the finished epochs a resumed run takes
// over from its checkpoint.
#pragma once

#include "models/checkpoint.h"
#include "models/training_record.h"
#include "train/options.h"

namespace octet {

// The options a record keeps of run `options` (augmentation as it took
// effect: on CIFAR-10 only).
RecordedOptions recorded_options(const TrainOptions& options);

// The finished epochs and totals of the run that wrote `checkpoint`, after
// checking that it is the same run: the options that shape the weights or
// the schedule must match (--resume).
TrainReport resumed_report(const TrainOptions& options, const Checkpoint& checkpoint);

}  // namespace octet
