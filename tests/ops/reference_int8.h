// The oracle of octet's integer inference: every operator's int8 reference
// (graph/op.h), run node by node. Deliberately naive and written independently
// of the runtimes: NCHW activations, torch-layout weights, one output element
// at a time, sharing only common/requantize.h. Each reference sizes its output
// from its inputs' dimensions, not from Graph::shapes(), which the runtimes
// plan with: a wrong shape rule shows as a mismatch. The tests hold every
// runtime to it with zero tolerance.
#pragma once

#include <vector>

#include "graph/op.h"
#include "qmodel/quantized_model.h"

namespace octet {

struct ReferenceRun {
  std::vector<ActTensor> values;  // per node, [N][C][H][W] (empty for the output node); int16 where wide
  Int32Tensor logits;              // [N][classes]: the last output's
  std::vector<Int32Tensor> outputs;  // every output's, in order (Graph::outputs)
};

ReferenceRun reference_run(const QuantizedModel& model, const float* input_nchw, int64_t batch);

// NCHW -> NHWC, to compare with the runtimes' activations.
ActTensor nchw_to_nhwc(const ActTensor& x);

// The `count` values an engine's hook gives for node `node` (engine.h Hook:
// int8, or int16 where the node is wide), in the oracle's type.
std::vector<int16_t> hook_values(const QuantizedModel& model, int node, const int8_t* values, int64_t count);

}  // namespace octet
