// Cross-layer equalization (Nagel et al. 2019, "Data-Free Quantization
// Through Weight Equalization and Bias Correction", section 4.1). Where a
// conv's output is read only by another conv, through nothing or a fused
// ReLU, output channel i of the first is divided by s_i and input channel i
// of the second multiplied by it: the function is unchanged (ReLU commutes
// with a positive scale), and with s_i = sqrt(r1_i / r2_i) both channels'
// weight ranges become sqrt(r1_i * r2_i). Per-tensor weight scales then fit
// every channel: what depthwise networks need. A fused ReLU6 becomes ReLU,
// as in the paper (its clip at 6 would move to 6 / s_i, channel by channel).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/fold.h"
#include "qmodel/quantized_model.h"

namespace octet {

struct EqualizedPair {
  std::string first, second;  // conv names: first's output channels, second's input channels
  bool relu6_became_relu = false;
};

struct Equalization {
  FloatModel model;
  std::vector<EqualizedPair> pairs;  // in graph order
};

// Deterministic; a model without such a pair comes back unchanged.
Equalization equalize_cross_layer(const FloatModel& model);

// The float model whose layer outputs a quantized model's stand for: the
// checkpoint's `folded` model, equalized again (the same bytes) where `model`
// was quantized so; empty otherwise. Its logits differ from the checkpoint's
// only where a ReLU6 became ReLU.
std::optional<FloatModel> equalized_reference(const FloatModel& folded, const QuantizedModel& model);

}  // namespace octet
