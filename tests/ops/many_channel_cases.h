// The operator harness's operators over many channels at batch 1 to 3 (the
// CPU kernels' vector loops and their tails, output rows and channel blocks
// shared between threads): ResNet-50's and GoogLeNet's max pools, the global
// average pool of a wide last layer, ShuffleNetV2's channel shuffles.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_wide_many_channel_cases(std::vector<OpCase>& cases);

}  // namespace octet
