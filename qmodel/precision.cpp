#include "qmodel/precision.h"

#include <cstdio>

#include "graph/op.h"

namespace octet {

namespace {
std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * share);
  return text;
}
}  // namespace

std::string PrecisionSummary::describe() const {
  if (float_nodes.empty()) return "all int8";
  std::string text = "int8 on " + percent(int8_mac_share) + " of the MACs; in float:";
  for (size_t k = 0; k < float_nodes.size(); ++k)
    text += (k ? ", " : " ") + float_nodes[k].name + " (" + float_nodes[k].op + ", " + percent(float_nodes[k].mac_share) + ")";
  return text;
}

std::vector<double> mac_shares(const QuantizedModel& m) {
  const std::vector<ActShape> shapes = m.graph.shapes();
  std::vector<double> shares(m.graph.nodes.size());
  double total = 0;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i)
    total += shares[i] = op_macs(m.graph.nodes[i], shapes, static_cast<int>(i));
  for (double& share : shares) share = total > 0 ? share / total : 0;
  return shares;
}

PrecisionSummary precision_summary(const QuantizedModel& m) {
  const std::vector<double> shares = mac_shares(m);
  PrecisionSummary s;
  double in_float = 0;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    if (!m.quant[i].in_float) continue;
    s.float_nodes.push_back({m.graph.nodes[i].name, op_name(m.graph.nodes[i].op), shares[i]});
    in_float += shares[i];
  }
  s.int8_mac_share = 1 - in_float;
  return s;
}

nlohmann::json precision_json(const PrecisionSummary& s) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const PrecisionSummary::FloatNode& n : s.float_nodes)
    nodes.push_back({{"name", n.name}, {"op", n.op}, {"mac_share", n.mac_share}});
  return {{"int8_mac_share", s.int8_mac_share}, {"float_nodes", nodes}};
}

}  // namespace octet
