// The functions of the Activation operator (graph/ops/activation.cpp), by
// the name a node's `function` holds, and their int8 form: a table of 256
// output levels, one per input level, made once from the two scales by this
// one function for every backend and the oracle (as TFLite does for its
// logistic and hard-swish kernels), so that every backend computes the same bits.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace octet::ops {

// "clip" (alpha: min, beta: max), "leaky_relu" (alpha: the negative slope),
// "sigmoid", "hard_sigmoid" (max(0, min(1, alpha x + beta))), "hard_swish"
// (x hard_sigmoid(x) at alpha 1/6, beta 1/2), "silu" (x sigmoid(x)), "gelu"
// (x Phi(x), Phi the normal distribution: erf's form, not tanh's), "tanh",
// "elu" (alpha (e^x - 1) below 0), "selu" (beta times ELU's: beta is ONNX's
// gamma, self-normalising networks' 1.0507 and alpha 1.6733), "celu" (alpha
// (e^(x / alpha) - 1) below 0), "softplus" (log(1 + e^x)) and "mish"
// (x tanh(softplus(x)), YOLOv4's); "square" (x^2), "sqrt" (sqrt(alpha max(x,
// 0)): an L2 norm from a mean of squares over alpha values) and "reciprocal"
// (1 / (alpha x + beta): a division by a computed value, its affine folded in;
// a pole's side clamps to the int8 range, and whatever computes it is to keep
// its input away from the pole); "exp" (e^x: a softmax's numerators, after
// the largest is subtracted, in (0, 1]).
const std::vector<std::string>& activation_functions();

// The function of `n` at x, in double (the int8 tables' precision).
double activation_value(const Node& n, double x);
// The same resolved once from `n`'s name (fails naming an unknown one), for loops over many values: f(x, alpha, beta).
using ActivationFunction = double (*)(double x, double alpha, double beta);
ActivationFunction activation_function(const Node& n);

// Output level for each input level q (at index q + 128), with z_in and z_out
// the zero points: clamp(floor(f((q - z_in) / s_in) s_out + 1/2) + z_out, -128, 127).
std::array<int8_t, 256> activation_table(const Node& n, float input_scale, float output_scale,
                                         int32_t input_zero_point = 0, int32_t output_zero_point = 0);

}  // namespace octet::ops
