// The operator harness's cases with zero points (graph/node_quant.h): every
// operator that reads or makes one, at -128 (a non-negative tensor stored
// unsigned, octet's use) and at other values (the runtimes take any).
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_zero_point_cases(std::vector<OpCase>& cases);

}  // namespace octet
