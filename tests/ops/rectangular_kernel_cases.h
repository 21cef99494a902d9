// The operator harness's convs with non-square kernels (Inception's 1x7 and
// 7x1; grouped and depthwise ones, as a depthwise Conv1d is 1 x k; and
// others), alone and in a quantized network.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_rectangular_kernel_cases(std::vector<OpCase>& cases);

}  // namespace octet
