// The operator harness's pools over many channels at batch 1 and 2 (the
// CPU kernels' vector loops and their tails, output rows and channel blocks
// shared between threads): ResNet-50's and GoogLeNet's max pools, the global
// average pool of a wide last layer.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_wide_pool_cases(std::vector<OpCase>& cases);

}  // namespace octet
