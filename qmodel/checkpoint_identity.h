// The identity of a float checkpoint (models/checkpoint.h) that a quantized
// model records (QuantizedModel::source), and the check that a checkpoint and
// a quantized model given together belong together.
#pragma once

#include <string>

#include "models/checkpoint.h"
#include "qmodel/quantized_model.h"

namespace octet {

// SHA-256 of the parameters (in name order: name, shape, float32 values) and
// of the training graph's JSON. Neither depends on the training log or the file
// layout, so re-saving the same weights keeps the identity.
CheckpointIdentity checkpoint_identity(const Checkpoint& checkpoint);

// Fails naming both (`model_name`, `checkpoint_name`: how the message calls
// them, e.g. a quoted path) and both identities unless `model` was quantized
// from `checkpoint`.
void check_quantized_from(const QuantizedModel& model, const std::string& model_name, const Checkpoint& checkpoint,
                          const std::string& checkpoint_name);

}  // namespace octet
