// The oracle of octet's integer inference: every operator's int8 reference
// (graph/op.h), run node by node. Deliberately naive and written independently
// of the runtimes: NCHW activations, torch-layout weights, one output element
// at a time, sharing only common/requantize.h. Each reference sizes its output
// from its inputs' dimensions, not from Graph::shapes(), which the runtimes
// plan with: a wrong shape rule shows as a mismatch. The tests hold every
// runtime to it with zero tolerance.
#pragma once

#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

struct ReferenceRun {
  std::vector<Int8Tensor> values;  // per node, [N][C][H][W] (empty for the output node)
  Int32Tensor logits;              // [N][classes]
};

ReferenceRun reference_run(const QuantizedModel& model, const float* input_nchw, int64_t batch);

// NCHW -> NHWC, to compare with the runtimes' activations.
Int8Tensor nchw_to_nhwc(const Int8Tensor& x);

}  // namespace octet
