// The quantized model's arithmetic in float ("fake quantization"): weights and
// biases are the dequantized int8/int32 values, and each node's output is
// rounded to its int8 grid. It checks the integer runtime (at most 1 LSB apart
// per output) and shows what quantization alone does to a float pipeline.
#pragma once

#include "graph/float_executor.h"
#include "graph/op.h"
#include "qmodel/quantized_model.h"

namespace octet {

// The quantized graph with dequantized parameters: w = q / s_w, b = q_b / (s_in s_w).
FloatModel dequantized_model(const QuantizedModel& model);

// Rounds a node's float output to its grid (half-way up, as requantize rounds)
// and returns the levels: int8's, or a wide node's (NodeQuant::bits); the
// output node has no grid and is not accepted.
ActTensor fake_quantized_levels(const QuantizedModel& model, int node, const FloatTensor& value);

}  // namespace octet
