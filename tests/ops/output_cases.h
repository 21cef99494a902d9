// The operator harness's models of several outputs (Graph::outputs): a
// detection head's scales and a classifier beside them, an output read from a
// layer that later layers read too, and one layer returned twice. Every output's
// int32 logits must equal the oracle's, at batches that the CPU runtime shares
// out image by image and at one.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_output_cases(std::vector<OpCase>& cases);

}  // namespace octet
