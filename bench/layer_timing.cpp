#include "bench/layer_timing.h"

#include <algorithm>

#include "bench/timing.h"
#include "graph/op.h"

namespace octet {


std::vector<LayerTiming> cpu_layer_times(const CpuEngine& engine, const float* input, int64_t batch, int warmup,
                                         int iterations) {
  const Graph& g = engine.model().graph;
  const size_t nodes = g.nodes.size();
  std::vector<std::vector<double>> ms(nodes);
  for (int it = 0; it < warmup + iterations; ++it) {
    std::vector<double> finished(nodes, 0);
    const auto start = BenchClock::now();
    engine.run(input, batch, [&](int node, const int8_t*, int64_t) { finished[node] = milliseconds_since(start); });
    finished[nodes - 1] = milliseconds_since(start);
    if (it < warmup) continue;
    double previous = 0;
    for (size_t i = 0; i < nodes; ++i) {
      ms[i].push_back(finished[i] - previous);
      previous = finished[i];
    }
  }
  std::vector<LayerTiming> out;
  for (size_t i = 0; i < nodes; ++i)
    out.push_back({g.nodes[i].name, op_name(g.nodes[i].op), double(batch) * op_macs(g.nodes[i], engine.shapes(), static_cast<int>(i)),
                   median(ms[i]), ""});
  return out;
}

double tops(const LayerTiming& layer) {
  return layer.milliseconds > 0 ? 2 * layer.macs / (layer.milliseconds * 1e9) : 0;
}

std::vector<LayerTiming> largest_convs(const std::vector<LayerTiming>& layers) {
  double most = 0;
  for (const LayerTiming& l : layers)
    if (l.op == "conv2d") most = std::max(most, l.macs);
  std::vector<LayerTiming> out;
  for (const LayerTiming& l : layers)
    if (l.op == "conv2d" && l.macs == most) out.push_back(l);
  return out;
}

void print_layers(std::FILE* out, const std::string& title, const std::vector<LayerTiming>& layers) {
  std::fprintf(out, "  %s\n  %-22s %-14s %10s %10s %9s  %s\n", title.c_str(), "node", "op", "MMACs", "ms", "TOPS",
               "kernel");
  double total = 0;
  for (const LayerTiming& l : layers) {
    total += l.milliseconds;
    const std::string achieved = l.macs > 0 ? std::to_string(tops(l)).substr(0, 7) : "";
    std::fprintf(out, "  %-22s %-14s %10.1f %10.4f %9s  %s\n", l.name.c_str(), l.op.c_str(), l.macs / 1e6,
                 l.milliseconds, achieved.c_str(), l.kernel.c_str());
  }
  std::fprintf(out, "  %-22s %-14s %10s %10.4f\n", "total", "", "", total);
}

nlohmann::json layers_json(const std::vector<LayerTiming>& layers) {
  nlohmann::json out = nlohmann::json::array();
  for (const LayerTiming& l : layers)
    out.push_back({{"name", l.name},
                   {"op", l.op},
                   {"macs", l.macs},
                   {"milliseconds", l.milliseconds},
                   {"tops", tops(l)},
                   {"kernel", l.kernel}});
  return out;
}

}  // namespace octet
