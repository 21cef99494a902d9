// From a training graph to the inference graph every later stage uses:
// each batch norm is folded into the conv before it (w' = w * g / sqrt(v + eps),
// b' = (b - m) * g / sqrt(v + eps) + beta) and each ReLU is fused into the op
// that produces its input when that op has no other consumer. Every conv and
// linear of the result has a bias (zeros where the model had none).
#pragma once

#include <map>
#include <string>

#include "common/tensor.h"
#include "graph/graph.h"

namespace octet {

struct FloatModel {
  Graph graph;                                 // inference graph
  std::map<std::string, FloatTensor> params;  // torch layouts: conv OIHW, linear [out][in]
  const FloatTensor& weight(const Node& n) const;
  const FloatTensor& bias(const Node& n) const;
};

FloatModel fold_for_inference(const Graph& graph, const std::map<std::string, FloatTensor>& params);

}  // namespace octet
