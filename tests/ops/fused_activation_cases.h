// The operator harness's convs and linears followed by a table activation or
// PRelu, which the CUDA runtime computes in the layer's epilogue (cuda/
// device_layout.h ValueLayout::fused_activation), and one it must not fuse.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_fused_activation_cases(std::vector<OpCase>& cases);

}  // namespace octet
