#include "calibrate/layer_histograms.h"

#include <algorithm>
#include <cmath>

#include "graph/op_traits.h"

namespace octet {

Histogram histogram_of(const float* values, int64_t count, double lo, double hi, int bins) {
  Histogram h;
  h.lo = lo;
  h.hi = hi > lo ? hi : lo + 1e-12;
  h.counts.assign(static_cast<size_t>(bins), 0);
  const double scale = bins / (h.hi - h.lo);
  for (int64_t i = 0; i < count; ++i) {
    const int b = static_cast<int>((values[i] - h.lo) * scale);
    ++h.counts[std::clamp(b, 0, bins - 1)];
  }
  return h;
}

std::vector<LayerHistogram> weight_histograms(const FloatModel& model, int bins) {
  std::vector<LayerHistogram> out;
  for (const Node& n : model.graph.nodes) {
    if (!op_traits(n.op).weighted) continue;
    const FloatTensor& w = model.weight(n);
    LayerHistogram h;
    h.name = n.name;
    h.op = op_name(n.op);
    h.kind = "weight";
    const auto [lo, hi] = std::minmax_element(w.data.begin(), w.data.end());
    h.min = *lo;
    h.max = *hi;
    double sum = 0, sum_sq = 0;
    for (float v : w.data) {
      sum += v;
      sum_sq += double(v) * v;
    }
    h.mean = sum / static_cast<double>(w.numel());
    h.std = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(w.numel()) - h.mean * h.mean));
    h.histogram = histogram_of(w.ptr(), w.numel(), h.min, h.max, bins);
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<LayerHistogram> activation_histograms(const FloatExecutor& executor, const Calibration& cal, int bins) {
  const Graph& g = executor.graph();
  std::vector<LayerHistogram> layers(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TensorStats& s = cal.stats[i];
    LayerHistogram& h = layers[i];
    h.name = g.nodes[i].name;
    h.op = op_name(g.nodes[i].op);
    h.kind = "activation";
    h.min = s.min();
    h.max = s.max();
    h.mean = s.mean();
    h.std = s.std();
    h.histogram = Histogram{h.min, h.max > h.min ? h.max : h.min + 1e-12, std::vector<int64_t>(bins, 0)};
  }
  // A second pass over the calibration images bins the values within each tensor's range.
  const int64_t image_numel = executor.shapes()[0].numel(), batch = 128;
  for (int64_t first = 0; first < cal.samples; first += batch) {
    const int64_t n = std::min(batch, cal.samples - first);
    executor.run(cal.images.data() + first * image_numel, n, [&](int node, const FloatTensor& act) {
      if (!op_traits(g.nodes[node].op).owns_scale) return;
      const Histogram part = histogram_of(act.ptr(), act.numel(), layers[node].histogram.lo, layers[node].histogram.hi, bins);
      for (int b = 0; b < bins; ++b) layers[node].histogram.counts[b] += part.counts[b];
    });
  }
  std::vector<LayerHistogram> out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (op_traits(g.nodes[i].op).owns_scale) out.push_back(std::move(layers[i]));
  return out;
}

}  // namespace octet
