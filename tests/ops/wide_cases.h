// The operator harness's cases with wide activations (NodeQuant::bits, int16):
// dense convs making them, reading them as input and as fused residual.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_wide_cases(std::vector<OpCase>& cases);

}  // namespace octet
