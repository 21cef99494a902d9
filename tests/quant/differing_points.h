// The quantization points where two models of one graph chose differently:
// how the amax-search tests compare a search with its oracle.
#pragma once

#include <string>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

// The points whose scale or method differ, named "node (method vs method)".
inline std::vector<std::string> differing_points(const QuantizedModel& a, const QuantizedModel& b) {
  std::vector<std::string> differ;
  for (size_t i = 0; i < a.quant.size(); ++i)
    if (a.quant[i].scale != b.quant[i].scale || a.quant[i].method != b.quant[i].method)
      differ.push_back(a.graph.nodes[i].name + " (" + a.quant[i].method + " vs " + b.quant[i].method + ")");
  return differ;
}

}  // namespace octet
