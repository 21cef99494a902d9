// Activation: an element-wise function of one value (graph/ops/activation.h
// names them): Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, SiLU, GELU,
// Tanh, ELU, SELU, CELU, Softplus and Mish as ONNX and torch define them, and
// the square, square root and reciprocal steps of a norm (ConvNeXt-V2's GRN),
// and exp (a softmax over positions: GCNet's attention pooling).
// Attributes: function, alpha, beta. In int8 its
// output has a scale of its own and each input level maps to one output level
// through a 256-entry table; a Clip(0, max) after a conv is instead fused into
// the conv as a bounded ReLU (graph/fold.cpp).
#include "graph/ops/activation.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

const std::vector<std::string>& activation_functions() {
  static const std::vector<std::string> names = {"clip", "leaky_relu", "sigmoid", "hard_sigmoid", "hard_swish",
                                                 "silu", "gelu",       "tanh",    "elu",          "selu",
                                                 "celu", "softplus",   "mish",    "square",       "sqrt",
                                                 "reciprocal", "exp"};
  return names;
}

namespace {
// log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|)
double softplus(double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v))); }
}  // namespace

ActivationFunction activation_function(const Node& n) {
  const std::string& f = n.function;
  if (f == "clip") return [](double x, double alpha, double beta) { return std::min(std::max(x, alpha), beta); };
  if (f == "leaky_relu") return [](double x, double alpha, double) { return x >= 0 ? x : alpha * x; };
  if (f == "sigmoid") return [](double x, double, double) { return 1.0 / (1.0 + std::exp(-x)); };
  if (f == "hard_sigmoid")
    return [](double x, double alpha, double beta) { return std::min(std::max(alpha * x + beta, 0.0), 1.0); };
  if (f == "hard_swish")
    return [](double x, double, double) { return x * std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0); };
  if (f == "silu") return [](double x, double, double) { return x / (1.0 + std::exp(-x)); };
  if (f == "gelu") return [](double x, double, double) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  if (f == "tanh") return [](double x, double, double) { return std::tanh(x); };
  if (f == "elu") return [](double x, double alpha, double) { return x >= 0 ? x : alpha * std::expm1(x); };
  if (f == "selu")
    return [](double x, double alpha, double beta) { return beta * (x > 0 ? x : alpha * std::expm1(x)); };
  if (f == "celu") return [](double x, double alpha, double) { return x >= 0 ? x : alpha * std::expm1(x / alpha); };
  if (f == "softplus") return [](double x, double, double) { return softplus(x); };
  if (f == "mish") return [](double x, double, double) { return x * std::tanh(softplus(x)); };
  if (f == "square") return [](double x, double, double) { return x * x; };
  if (f == "sqrt") return [](double x, double alpha, double) { return std::sqrt(alpha * std::max(x, 0.0)); };
  if (f == "reciprocal") return [](double x, double alpha, double beta) { return 1.0 / (alpha * x + beta); };
  if (f == "exp") return [](double x, double, double) { return std::exp(x); };
  fail("unknown activation function '" + f + "'");
}

double activation_value(const Node& n, double x) { return activation_function(n)(x, n.alpha, n.beta); }

std::array<int8_t, 256> activation_table(const Node& n, float input_scale, float output_scale, int32_t input_zero_point,
                                         int32_t output_zero_point) {
  std::array<int8_t, 256> table;
  const ActivationFunction f = activation_function(n);
  for (int q = -128; q <= 127; ++q) {
    const double x = (q - input_zero_point) / double(input_scale);
    const double y = std::floor(f(x, n.alpha, n.beta) * output_scale + 0.5) + output_zero_point;
    table[static_cast<size_t>(q + 128)] = static_cast<int8_t>(std::clamp(y, -128.0, 127.0));
  }
  return table;
}

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const auto& names = activation_functions();
  check(std::find(names.begin(), names.end(), n.function) != names.end(),
        "unknown activation function '" + n.function + "'");
  check(n.function != "clip" || n.alpha <= n.beta, "clip's min is above its max");
  check(n.function != "celu" || n.alpha != 0, "celu's alpha is 0");
  check(n.function != "sqrt" || n.alpha > 0, "sqrt's alpha is not above 0");
  check(n.function != "reciprocal" || n.alpha != 0, "reciprocal's alpha is 0");
  return in[0];
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  FloatTensor& y = a.y;
  const ActivationFunction f = activation_function(a.node);  // resolved once: not a name comparison per value
  const double alpha = a.node.alpha, beta = a.node.beta;
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
  for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = static_cast<float>(f(x.data[k], alpha, beta));
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const std::array<int8_t, 256> table =
      activation_table(a.node, a.input_scales.at(0), a.q.scale, a.input_zero_points.at(0), a.q.zero_point);
  a.y = ActTensor(x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) a.y.data[k] = table[static_cast<size_t>(x.data[k] + 128)];
}
}  // namespace

//                               name          in train  weight image  relu   resid  scale  mult  moves
extern const OpDef activation = {{Op::Activation, "activation", 1, false, false, false, false, false, true, 0, false},
                                 shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
