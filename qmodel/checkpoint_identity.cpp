#include "qmodel/checkpoint_identity.h"

#include "common/digest.h"
#include "common/error.h"

namespace octet {

CheckpointIdentity checkpoint_identity(const Checkpoint& checkpoint) {
  CheckpointIdentity id;
  id.model = checkpoint.model;
  Sha256 params;
  for (const auto& [name, tensor] : checkpoint.params) {  // std::map: name order
    params.update(name.c_str(), name.size() + 1);
    const int64_t rank = static_cast<int64_t>(tensor.shape.size());
    params.update(&rank, sizeof(rank));
    params.update(tensor.shape.data(), tensor.shape.size() * sizeof(int64_t));
    params.update(tensor.data.data(), tensor.data.size() * sizeof(float));
  }
  id.params_sha256 = params.hex();
  id.graph_sha256 = Sha256().update(checkpoint.graph.to_json()).hex();
  return id;
}

void check_quantized_from(const QuantizedModel& model, const std::string& model_name, const Checkpoint& checkpoint,
                          const std::string& checkpoint_name) {
  const CheckpointIdentity given = checkpoint_identity(checkpoint);
  check(model.source == given, model_name + " was quantized from the checkpoint " + model.source.describe() +
                                   ", not from " + checkpoint_name + ", which is " + given.describe() +
                                   ": pass the float checkpoint it was quantized from");
}

}  // namespace octet
