// LocalResponseNorm: each value divided by (bias + alpha / size x the sum of
// squares over a window of `size` channels about its own)^beta, the window as
// ONNX's LRN takes it (AlexNet's, CaffeNet's, GoogLeNet's and Inception-v1's
// from Caffe, in the ONNX Model Zoo). Attributes: kernel (the size), alpha,
// beta, epsilon (the bias). In int8 its output has a scale of its own
// (local_response_norm.h says how each level is computed).
#include "graph/ops/local_response_norm.h"

#include <string>
#include <vector>

#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

LocalResponseLevels local_response_levels(const Node& n, double input_scale, double output_scale,
                                          int32_t input_zero_point, int32_t output_zero_point) {
  return {n.kernel,          output_scale / input_scale, double(n.alpha) / (n.kernel * input_scale * input_scale),
          double(n.epsilon), double(n.beta),             input_zero_point,
          output_zero_point};
}

double local_response_multiplier(int64_t squares, const LocalResponseLevels& p) {
  return p.ratio / std::pow(p.bias + p.gain * double(squares), p.beta);
}

std::vector<double> local_response_multipliers(const LocalResponseLevels& p) {
  const int64_t most = std::max<int64_t>(127 - p.input_zero_point, p.input_zero_point + 128);
  std::vector<double> by_squares(static_cast<size_t>(p.size * most * most + 1));
  for (size_t s = 0; s < by_squares.size(); ++s) by_squares[s] = local_response_multiplier(static_cast<int64_t>(s), p);
  return by_squares;
}

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.kernel >= 1 && n.kernel <= kMostLocalResponseNormSize,
        "a local response norm of " + std::to_string(n.kernel) + " channels (1 to " +
            std::to_string(kMostLocalResponseNormSize) + ")");
  check(std::isfinite(n.alpha) && n.alpha >= 0, "alpha " + std::to_string(n.alpha) + " is not finite and >= 0");
  check(std::isfinite(n.beta) && n.beta >= 0 && n.beta <= 16, "beta " + std::to_string(n.beta) + " is not in [0, 16]");
  check(std::isfinite(n.epsilon) && n.epsilon > 0, "bias " + std::to_string(n.epsilon) + " is not finite and > 0");
  return in[0];
}

void run_float(const FloatOpArgs& a) {
  const Node& n = a.node;
  const FloatTensor& x = *a.inputs[0];
  const int C = a.out.c;
  const int64_t pixels = x.numel() / C;
#pragma omp parallel for if (x.numel() >= kMinParallelElements)
  for (int64_t p = 0; p < pixels; ++p) {
    const float* v = x.ptr() + p * C;
    for (int c = 0; c < C; ++c) {
      double squares = 0;
      for (int k = local_response_first(c, n.kernel); k <= local_response_last(c, n.kernel, C); ++k)
        squares += double(v[k]) * v[k];
      const double divisor = std::pow(double(n.epsilon) + double(n.alpha) / n.kernel * squares, double(n.beta));
      a.y.ptr()[p * C + c] = static_cast<float>(v[c] / divisor);
    }
  }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const LocalResponseLevels p =
      local_response_levels(a.node, a.input_scales.at(0), a.q.scale, a.input_zero_points.at(0), a.q.zero_point);
  const auto multiplier = [&](int64_t squares) { return local_response_multiplier(squares, p); };
  write_by_pixel(a, a.inputs[0]->dim(1), [&](const int16_t* x, int64_t channels, int8_t* y) {
    local_response_pixel(x, static_cast<int>(channels), p, multiplier, y);
  });
}
}  // namespace

// Columns: name, inputs, training only, weighted, reads an image, absorbs a ReLU, absorbs a residual, owns a
// scale, input multipliers, moves values.
extern const OpDef local_response_norm = {
    {Op::LocalResponseNorm, "local_response_norm", 1, false, false, true, false, false, true, 0, false},
    shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
