#include "quant/bias_correction.h"

#include "common/error.h"
#include "graph/layout.h"
#include "graph/op.h"

namespace octet {

FloatModel correct_biases(const FloatModel& folded, const std::map<std::string, QuantizedWeights>& weights,
                          const std::vector<std::vector<double>>& channel_means, const std::set<std::string>& keep) {
  FloatModel corrected = folded;
  const Graph& g = folded.graph;
  const std::vector<ActShape> shapes = g.shapes();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!op_traits(n.op).weighted || keep.count(n.name)) continue;
    const std::vector<double>& mean = channel_means.at(n.inputs[0]);
    const QuantizedWeights& q = weights.at(n.name);
    // In NHWC reading order (graph/layout.h), as the means are: a conv's row is
    // (ky, kx, its group's input channel), a linear's the features in the order
    // its input holds them, one "channel" each.
    const int node = static_cast<int>(i);
    const FloatTensor w = nhwc_weight(g, shapes, node, folded.weight(n));
    const Int8Tensor levels = nhwc_weight(g, shapes, node, q.values);
    const int64_t O = w.dim(0), K = w.dim(1);
    const int64_t in_per_group = n.op == Op::Conv2d ? shapes[n.inputs[0]].c / n.groups : K;
    const int64_t out_per_group = O / n.groups;
    check(static_cast<int64_t>(mean.size()) == in_per_group * n.groups,
          "bias correction: no input means for layer '" + n.name + "'");
    FloatTensor& bias = corrected.params.at(n.name + ".bias");
    for (int64_t o = 0; o < O; ++o) {
      const int64_t first_channel = (o / out_per_group) * in_per_group;
      double shift = 0;
      for (int64_t k = 0; k < K; ++k)
        shift += (double(levels.data[o * K + k]) / q.scales.data[o] - w.data[o * K + k]) *
                 mean[first_channel + k % in_per_group];
      bias.data[o] = static_cast<float>(bias.data[o] - shift);
    }
  }
  return corrected;
}

}  // namespace octet
