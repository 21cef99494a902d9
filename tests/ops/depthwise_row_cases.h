// The operator harness's depthwise convs of stride 1 whose rows CUDA may run
// 4 output pixels a thread (conv2d_grouped_kernel.h depthwise_row_item, for
// 3x3, 5x5 and 7x7): rows of 1, 3 and 7 outputs (a thread's four in part past
// the row), taps outside on both sides or none, a residual, and a uint8 input.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_depthwise_row_cases(std::vector<OpCase>& cases);

}  // namespace octet
