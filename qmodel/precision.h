// Which nodes of a quantized model run in float (mixed precision) and what
// share of its multiply-adds stays int8, and which activations are wide
// (NodeQuant::bits), as quantize, eval and bench print it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

struct PrecisionSummary {
  struct FloatNode {
    std::string name, op;
    double mac_share = 0;  // of the model's multiply-adds per image
  };
  std::vector<FloatNode> float_nodes;
  double int8_mac_share = 1;
  struct WideActivation {
    std::string name;
    int bits = 8;
  };
  std::vector<WideActivation> wide;
  double wide_input_mac_share = 0;  // of the convs reading a wide activation (int8 x int16 products)
  // "all int8", or "int8 on 96.1% of the MACs; in float: conv1 (conv2d, 3.9%)",
  // then "; 10 wide activations (16 bits), read by 31.2% of the MACs" where some are.
  std::string describe() const;
};

PrecisionSummary precision_summary(const QuantizedModel& model);
// Per node, its share of the model's multiply-adds per image.
std::vector<double> mac_shares(const QuantizedModel& model);
// {"int8_mac_share": 0.961, "float_nodes": [{"name", "op", "mac_share"}...],
//  "wide_activations": [{"name", "bits"}...], "wide_input_mac_share": 0.312}
nlohmann::json precision_json(const PrecisionSummary& summary);

}  // namespace octet
