#include "bench/layer_timing.h"

#include <algorithm>

namespace octet {

double tops(const Engine::NodeTiming& node) {
  return node.milliseconds > 0 ? 2 * node.macs / (node.milliseconds * 1e9) : 0;
}

NodeTimings largest_convs(const NodeTimings& nodes) {
  double most = 0;
  for (const Engine::NodeTiming& l : nodes)
    if (l.op == "conv2d") most = std::max(most, l.macs);
  NodeTimings out;
  for (const Engine::NodeTiming& l : nodes)
    if (l.op == "conv2d" && l.macs == most) out.push_back(l);
  return out;
}

void print_layers(std::FILE* out, const std::string& title, const NodeTimings& nodes) {
  std::fprintf(out, "  %s\n  %-22s %-14s %10s %10s %9s  %s\n", title.c_str(), "node", "op", "MMACs", "ms", "TOPS",
               "kernel");
  double total = 0;
  for (const Engine::NodeTiming& l : nodes) {
    total += l.milliseconds;
    const std::string achieved = l.macs > 0 ? std::to_string(tops(l)).substr(0, 7) : "";
    std::fprintf(out, "  %-22s %-14s %10.1f %10.4f %9s  %s\n", l.name.c_str(), l.op.c_str(), l.macs / 1e6,
                 l.milliseconds, achieved.c_str(), l.kernel.c_str());
  }
  std::fprintf(out, "  %-22s %-14s %10s %10.4f\n", "total", "", "", total);
}

nlohmann::json layers_json(const NodeTimings& nodes) {
  nlohmann::json out = nlohmann::json::array();
  for (const Engine::NodeTiming& l : nodes)
    out.push_back({{"name", l.name},
                   {"op", l.op},
                   {"macs", l.macs},
                   {"milliseconds", l.milliseconds},
                   {"tops", tops(l)},
                   {"kernel", l.kernel}});
  return out;
}

void report_largest_convs(std::FILE* out, const std::string& backend, int64_t batch, const NodeTimings& nodes,
                          nlohmann::json& entries) {
  const NodeTimings largest = largest_convs(nodes);
  if (largest.empty()) return;
  const auto [worst, best] = std::minmax_element(
      largest.begin(), largest.end(),
      [](const Engine::NodeTiming& a, const Engine::NodeTiming& b) { return tops(a) < tops(b); });
  const long long images = batch;
  if (largest.size() == 1)
    std::fprintf(out, "  %s batch %lld: largest conv %s, %.1f MMACs in %.3f ms: %.2f int8 TOPS\n", backend.c_str(),
                 images, best->name.c_str(), best->macs / 1e6, best->milliseconds, tops(*best));
  else
    std::fprintf(out,
                 "  %s batch %lld: largest convs, %zu of %.1f MMACs each: %.2f int8 TOPS at best (%s, %.3f ms), "
                 "%.2f at worst (%s, %.3f ms)\n",
                 backend.c_str(), images, largest.size(), best->macs / 1e6, tops(*best), best->name.c_str(),
                 best->milliseconds, tops(*worst), worst->name.c_str(), worst->milliseconds);
  for (const Engine::NodeTiming& l : largest)
    entries.push_back({{"batch", batch},
                       {"backend", backend},
                       {"node", l.name},
                       {"macs", l.macs},
                       {"milliseconds", l.milliseconds},
                       {"tops", tops(l)}});
}

void print_timed_choices(std::FILE* out, const std::string& backend, const std::vector<Engine::TimedChoice>& choices) {
  std::fprintf(out, "  %s tile per conv shape (ms of one launch, * chosen; ms the timing took)\n", backend.c_str());
  double tuning = 0;
  for (const Engine::TimedChoice& c : choices) {
    std::fprintf(out, "  %-34s", c.problem.c_str());
    if (c.trials.empty()) std::fprintf(out, " %s (the only candidate)", c.chosen.c_str());
    for (const auto& [candidate, ms] : c.trials)
      std::fprintf(out, " %s %.4f%s", candidate.c_str(), ms, candidate == c.chosen ? "*" : "");
    if (!c.trials.empty()) std::fprintf(out, "; timed in %.1f ms", c.tuning_milliseconds);
    std::fprintf(out, "\n");
    tuning += c.tuning_milliseconds;
  }
  std::fprintf(out, "  tile timing: %.1f ms for %zu shapes, added to the first run of their batch sizes\n", tuning,
               choices.size());
}

nlohmann::json timed_choices_json(const std::vector<Engine::TimedChoice>& choices) {
  nlohmann::json out = nlohmann::json::array();
  for (const Engine::TimedChoice& c : choices) {
    nlohmann::json trials = nlohmann::json::array();  // in the cost model's order
    for (const auto& [candidate, ms] : c.trials) trials.push_back({{"tile", candidate}, {"milliseconds", ms}});
    out.push_back({{"shape", c.problem}, {"tile", c.chosen}, {"trials", trials}, {"tuning_ms", c.tuning_milliseconds}});
  }
  return out;
}

}  // namespace octet
