// Which tensors of a quantized graph cannot be negative, whatever the input:
// a ReLU's output (fused or not), a clip at 0 or above, a sigmoid, and what
// pools, moves, concatenates or multiplies only such tensors. Quantizing with
// unsigned activations stores them as uint8 (zero point -128 in int8's bytes,
// graph/node_quant.h), a step half as wide as signed int8's.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace octet {

// Per node of `g` (whose nodes come in dependency order): its output is never negative.
std::vector<bool> non_negative_outputs(const Graph& g);

}  // namespace octet
