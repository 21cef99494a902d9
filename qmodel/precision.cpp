#include "qmodel/precision.h"

#include <algorithm>
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
  std::string text =
      float_nodes.empty() ? "all int8" : "int8 on " + percent(int8_mac_share) + " of the MACs; in float:";
  for (size_t k = 0; k < float_nodes.size(); ++k)
    text += (k ? ", " : " ") + float_nodes[k].name + " (" + float_nodes[k].op + ", " + percent(float_nodes[k].mac_share) + ")";
  if (wide.empty()) return text;
  int fewest = 16, most = 9;
  for (const WideActivation& w : wide) fewest = std::min(fewest, w.bits), most = std::max(most, w.bits);
  const std::string bits = fewest == most ? std::to_string(most) : std::to_string(fewest) + "-" + std::to_string(most);
  return text + "; " + std::to_string(wide.size()) + " wide activations (" + bits + " bits), read by " +
         percent(wide_input_mac_share) + " of the MACs";
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
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    if (m.quant[i].bits > 8) s.wide.push_back({m.graph.nodes[i].name, m.quant[i].bits});
    const std::vector<int>& inputs = m.graph.nodes[i].inputs;
    if (!inputs.empty() && m.quant[inputs[0]].bits > 8) s.wide_input_mac_share += shares[i];
  }
  return s;
}

nlohmann::json precision_json(const PrecisionSummary& s) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const PrecisionSummary::FloatNode& n : s.float_nodes)
    nodes.push_back({{"name", n.name}, {"op", n.op}, {"mac_share", n.mac_share}});
  nlohmann::json wide = nlohmann::json::array();
  for (const PrecisionSummary::WideActivation& w : s.wide) wide.push_back({{"name", w.name}, {"bits", w.bits}});
  return {{"int8_mac_share", s.int8_mac_share},
          {"float_nodes", nodes},
          {"wide_activations", wide},
          {"wide_input_mac_share", s.wide_input_mac_share}};
}

}  // namespace octet
