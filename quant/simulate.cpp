#include "quant/simulate.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/op_traits.h"

namespace octet {

FloatModel dequantized_model(const QuantizedModel& m) {
  FloatModel f;
  f.graph = m.graph;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    if (!op_traits(n.op).weighted) continue;
    const NodeQuant& q = m.quant[i];
    const float s_in = m.quant[n.inputs[0]].scale;
    const int64_t O = q.weight.dim(0), per = q.weight.numel() / O;
    FloatTensor w(q.weight.shape), b({O});
    for (int64_t k = 0; k < q.weight.numel(); ++k) w.data[k] = q.weight.data[k] / q.weight_scale.data[k / per];
    for (int64_t o = 0; o < O; ++o) b.data[o] = static_cast<float>(q.bias.data[o] / (double(s_in) * q.weight_scale.data[o]));
    f.params[n.name + ".weight"] = std::move(w);
    f.params[n.name + ".bias"] = std::move(b);
  }
  return f;
}

ActTensor fake_quantized_levels(const QuantizedModel& m, int node, const FloatTensor& value) {
  check(!m.graph.is_output(node), "an output node has int32 logits, not an int8 grid");
  const NodeQuant& q = m.quant[node];
  const double zero_point = q.zero_point;
  const double lo = lowest_output(m.graph.nodes[node].relu, q.zero_point, q.bits), hi = highest_output(q.bits);
  ActTensor out(value.shape);
  for (int64_t k = 0; k < value.numel(); ++k)
    out.data[k] =
        static_cast<int16_t>(std::clamp(std::floor(double(value.data[k]) * q.scale + 0.5) + zero_point, lo, hi));
  return out;
}

}  // namespace octet
