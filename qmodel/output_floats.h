// A quantized model's outputs as floats where they leave octet (octet predict,
// the Python module, octet bench infer's rows with the outputs): each output
// node's int32 logits at its logit scale, decoded where the model decodes.
#pragma once

#include <cstdint>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

// Output node k's `batch` samples from logits[k] (NHWC, as the engines' run_outputs return them), dequantized and,
// where its view decodes (graph/output_decode.h), decoded.
std::vector<std::vector<float>> output_floats(const QuantizedModel& model, const std::vector<ActShape>& shapes,
                                              const std::vector<std::vector<int32_t>>& logits, int64_t batch);

}  // namespace octet
