// The int8 form of the PRelu operator (graph/ops/prelu.cpp): one table of
// 256 output levels per channel, made by this one function for every backend
// and the oracle, so that they compute the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "common/tensor.h"

namespace octet::ops {

// Channel c's output level for each input level q at [c * 256 + q + 128]:
// activation_table (activation.h) of a leaky ReLU of slope slope[c].
std::vector<int8_t> prelu_tables(const FloatTensor& slope, float input_scale, float output_scale,
                                 int32_t input_zero_point, int32_t output_zero_point);

}  // namespace octet::ops
