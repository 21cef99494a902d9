#include "quant/equalize.h"

#include <algorithm>
#include <cmath>

namespace octet {

namespace {

// The second conv's weight index of its input channel c, for each of its output
// channels: grouped and depthwise convs see only their group's input channels.
struct InputChannelView {
  int64_t in_per_group, out_per_group, window;
  // Calls f(weight offset of w[o][c - group start][*]) for every output channel o reading c.
  template <class F>
  void each(int64_t c, F f) const {
    const int64_t group = c / in_per_group, j = c % in_per_group;
    for (int64_t o = group * out_per_group; o < (group + 1) * out_per_group; ++o)
      f((o * in_per_group + j) * window);
  }
};

InputChannelView view_of(const FloatTensor& w, const Node& n) {
  const int64_t O = w.dim(0), in_per_group = w.dim(1), window = w.numel() / (O * in_per_group);
  return {in_per_group, O / n.groups, window};
}

// The pairs (first, second) of convs the scaling may pass between.
std::vector<std::pair<int, int>> find_pairs(const Graph& g) {
  const auto consumers = g.consumers();
  std::vector<std::pair<int, int>> pairs;
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    const Node& first = g.nodes[a];
    if (first.op != Op::Conv2d || consumers[a].size() != 1) continue;
    const Node& second = g.nodes[consumers[a][0]];
    if (second.op == Op::Conv2d && second.inputs.size() == 1)
      pairs.emplace_back(static_cast<int>(a), consumers[a][0]);
  }
  return pairs;
}

// Scales one pair; returns the largest |log s_i| it applied.
double equalize_pair(FloatTensor& w1, FloatTensor& b1, FloatTensor& w2, const Node& second) {
  const int64_t C = w1.dim(0), per1 = w1.numel() / C;
  const InputChannelView v = view_of(w2, second);
  double largest = 0;
  for (int64_t c = 0; c < C; ++c) {
    double r1 = 0, r2 = 0;
    for (int64_t k = 0; k < per1; ++k) r1 = std::max(r1, std::abs(double(w1.data[c * per1 + k])));
    v.each(c, [&](int64_t at) {
      for (int64_t k = 0; k < v.window; ++k) r2 = std::max(r2, std::abs(double(w2.data[at + k])));
    });
    if (r1 == 0 || r2 == 0) continue;  // a dead channel: nothing to balance
    const double s = std::sqrt(r1 / r2);
    for (int64_t k = 0; k < per1; ++k) w1.data[c * per1 + k] = static_cast<float>(w1.data[c * per1 + k] / s);
    b1.data[c] = static_cast<float>(b1.data[c] / s);
    v.each(c, [&](int64_t at) {
      for (int64_t k = 0; k < v.window; ++k) w2.data[at + k] = static_cast<float>(w2.data[at + k] * s);
    });
    largest = std::max(largest, std::abs(std::log(s)));
  }
  return largest;
}

}  // namespace

Equalization equalize_cross_layer(const FloatModel& model) {
  Equalization e{model, {}};
  const auto pairs = find_pairs(model.graph);
  for (const auto& [a, b] : pairs) {
    Node& first = e.model.graph.nodes[a];
    e.pairs.push_back({first.name, e.model.graph.nodes[b].name, first.relu && first.relu_max > 0});
    first.relu_max = 0;
  }
  // A conv between two pairs (expand -> depthwise -> project) is scaled from both
  // sides: sweep until no scale moves by more than 1e-4 (the paper iterates too).
  constexpr int max_sweeps = 100;
  int sweep = 0;
  for (double moved = 1; moved > 1e-4 && sweep < max_sweeps; ++sweep) {
    moved = 0;
    for (const auto& [a, b] : pairs) {
      const Node& first = e.model.graph.nodes[a];
      const Node& second = e.model.graph.nodes[b];
      moved = std::max(moved, equalize_pair(e.model.params.at(first.name + ".weight"),
                                            e.model.params.at(first.name + ".bias"),
                                            e.model.params.at(second.name + ".weight"), second));
    }
  }
  return e;
}

std::optional<FloatModel> equalized_reference(const FloatModel& folded, const QuantizedModel& model) {
  if (!model.equalized) return std::nullopt;
  return equalize_cross_layer(folded).model;
}

}  // namespace octet
