#include "quant/bias_correction.h"

#include "common/error.h"
#include "graph/op.h"

namespace octet {

FloatModel correct_biases(const FloatModel& folded, const std::map<std::string, QuantizedWeights>& weights,
                          const std::vector<std::vector<double>>& channel_means, const std::set<std::string>& keep) {
  FloatModel corrected = folded;
  for (const Node& n : folded.graph.nodes) {
    if (!op_traits(n.op).weighted || keep.count(n.name)) continue;
    const std::vector<double>& mean = channel_means.at(n.inputs[0]);
    const FloatTensor& w = folded.weight(n);
    const QuantizedWeights& q = weights.at(n.name);
    // Conv OIHW (a group's input channels) or linear [out][in]: window 1.
    const int64_t O = w.dim(0), in_per_group = w.dim(1), window = w.numel() / (O * in_per_group);
    const int64_t out_per_group = O / n.groups;
    check(static_cast<int64_t>(mean.size()) == in_per_group * n.groups,
          "bias correction: no input means for layer '" + n.name + "'");
    FloatTensor& bias = corrected.params.at(n.name + ".bias");
    for (int64_t o = 0; o < O; ++o) {
      const int64_t first_channel = (o / out_per_group) * in_per_group;
      double shift = 0;
      for (int64_t j = 0; j < in_per_group; ++j)
        for (int64_t k = 0; k < window; ++k) {
          const int64_t at = (o * in_per_group + j) * window + k;
          shift += (double(q.values.data[at]) / q.scales.data[o] - w.data[at]) * mean[first_channel + j];
        }
      bias.data[o] = static_cast<float>(bias.data[o] - shift);
    }
  }
  return corrected;
}

}  // namespace octet
