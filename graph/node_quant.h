// The integer parameters of one node of a quantized graph (qmodel/ holds the
// whole quantized model). Here, below qmodel/, because each operator's int8
// reference (graph/op.h) reads them.
#pragma once

#include <string>

#include "common/tensor.h"

namespace octet {

// Quantization parameters of one node of the quantized graph.
struct NodeQuant {
  float scale = 0;     // output activation scale; 0 for the int32 logits output
  float amax = 0;      // clipping value the scale came from: 127 / scale, or 255 / scale with zero point -128
  // The stored value of a real 0: q = round(x * scale) + zero_point. 0 (signed
  // int8), or -128 for a non-negative tensor (a ReLU's output): uint8 with
  // zero point 0, shifted by 128 into int8's bytes, so it uses all 256 levels.
  // Padding, and the zero channels of a shortcut, hold it.
  int32_t zero_point = 0;
  // The output's stored bits: 8 (int8), or 9-16 for a wide activation, stored
  // as int16 in [-2^(bits-1), 2^(bits-1) - 1] with zero point 0 and scale
  // (2^(bits-1) - 1) / amax. Only a conv's signed output whose every reader is
  // a dense conv (its input or its fused residual) is wide: an 8-bit grid
  // there costs MobileNetV2's residual stream most of its int8 error.
  int32_t bits = 8;
  std::string method;  // how amax was chosen ("max", "entropy", ..., "inherited")

  // Conv2d / Linear: weight in torch's layout, conv [O][I][KH][KW] and linear
  // [O][I] (a linear after a flatten reads C, H, W order); runtimes pack their
  // own layouts when they load the model.
  Int8Tensor weight;
  FloatTensor weight_scale;  // [O]
  Int32Tensor bias;          // [O], at scale s_in * s_w[o]
  // Conv2d / Linear: [O] per output channel; Add: [2] (the two inputs, one
  // shift); AvgPool2d / GlobalAvgPool: [1].
  Int32Tensor multiplier, shift;
  Int32Tensor skip_multiplier;  // conv / linear with a fused residual: [O]
  FloatTensor logit_scale;      // output node: [O], logit = acc * logit_scale
  // PRelu: [C], each channel's slope below 0, in int8 too: its int8 tables
  // are made from them and the scales (graph/ops/prelu.h), as an activation's
  // from its attributes.
  FloatTensor slope;
  // GroupNorm with an affine (Node::bias): [C] each, its scale and shift, in
  // float in int8 too (graph/ops/group_norm.h).
  FloatTensor norm_scale, norm_shift;

  // Kept in float (mixed precision; graph/float_node.h): the node reads its
  // inputs dequantized, runs its float reference and quantizes its output at
  // `scale`. It owns none of the integer parameters above; a weighted one owns
  // these, torch's layout like `weight`.
  bool in_float = false;
  FloatTensor float_weight;
  FloatTensor float_bias;  // [O]
};

}  // namespace octet
