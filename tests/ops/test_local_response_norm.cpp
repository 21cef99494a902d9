// LocalResponseNorm's int8 form (graph/ops/local_response_norm.h) against the
// normalisation computed in double from the dequantized values, each window
// summed anew: within half an output level (its rounding alone), for odd and
// even sizes, windows wider than the channels, zero points on both sides and
// saturation; and attributes out of range refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "graph/op.h"
#include "graph/ops/local_response_norm.h"

namespace octet::ops {
namespace {

Node lrn(int size, float alpha, float beta, float bias) {
  Node n;
  n.op = Op::LocalResponseNorm;
  n.kernel = size, n.alpha = alpha, n.beta = beta, n.epsilon = bias;
  return n;
}

// Each channel's level from the dequantized values (ONNX's definition), in double.
std::vector<double> exact_levels(const std::vector<int8_t>& x, const Node& n, double s_in, double s_out, int z_in,
                                 int z_out) {
  const int C = static_cast<int>(x.size());
  std::vector<double> levels;
  for (int c = 0; c < C; ++c) {
    double squares = 0;
    for (int k = std::max(0, c - (n.kernel - 1) / 2); k <= std::min(C - 1, c + n.kernel / 2); ++k)
      squares += std::pow((x[k] - z_in) / s_in, 2);
    const double y = (x[c] - z_in) / s_in / std::pow(n.epsilon + n.alpha / n.kernel * squares, n.beta);
    levels.push_back(std::clamp(y * s_out + z_out, -128.0, 127.0));
  }
  return levels;
}

double worst_difference(int channels, const Node& n, double s_in, double s_out, int z_in, int z_out) {
  std::mt19937 rng(static_cast<uint32_t>(channels * 31 + n.kernel));
  std::uniform_int_distribution<int> value(-128, 127);
  const LocalResponseLevels p = local_response_levels(n, s_in, s_out, z_in, z_out);
  const auto multiplier = [&](int64_t squares) { return local_response_multiplier(squares, p); };
  double worst = 0;
  for (int k = 0; k < 200; ++k) {
    std::vector<int8_t> x(static_cast<size_t>(channels)), y(x.size());
    for (int8_t& v : x) v = static_cast<int8_t>(value(rng));
    local_response_pixel(x.data(), channels, p, multiplier, y.data());
    const std::vector<double> exact = exact_levels(x, n, s_in, s_out, z_in, z_out);
    for (size_t c = 0; c < x.size(); ++c) worst = std::max(worst, std::abs(y[c] - exact[c]));
  }
  return worst;
}

constexpr double kHalf = 0.5 + 1e-6;  // a rounded level, no more

TEST(LocalResponseNormLevels, WithinHalfALevelOfTheNormalisationInDouble) {
  const Node alexnet = lrn(5, 1e-4f, 0.75f, 1.0f);  // at input scale 1, alpha x the mean square is about 0.5
  for (const int channels : {1, 2, 3, 5, 17, 96})
    EXPECT_LE(worst_difference(channels, alexnet, 1.0, 1.3, 0, 0), kHalf) << channels << " channels";
  EXPECT_LE(worst_difference(48, lrn(4, 1e-3f, 0.5f, 2.0f), 1.0, 2.0, 0, 0), kHalf);  // even: one more after
  EXPECT_LE(worst_difference(24, lrn(15, 1e-2f, 1.0f, 0.5f), 2.0, 8.0, -128, 0), kHalf);
  EXPECT_LE(worst_difference(24, lrn(1, 0.3f, 2.0f, 1.0f), 4.0, 40.0, 17, -9), kHalf);  // saturates often
  EXPECT_LE(worst_difference(10, lrn(3, 0.0f, 0.75f, 4.0f), 1.0, 3.0, 0, 5), kHalf);    // alpha 0: a scaling
}

TEST(LocalResponseNormLevels, TheWindowFollowsOnnxForEvenSizes) {
  // Size 2: channel c's window is c and c + 1 (torch's is c - 1 and c, which would give 67, 50, 0).
  const LocalResponseLevels p = local_response_levels(lrn(2, 1.0f, 1.0f, 1.0f), 1.0, 100.0, 0, 0);
  const auto multiplier = [&](int64_t squares) { return local_response_multiplier(squares, p); };
  const std::vector<int8_t> x = {1, 1, 0};
  std::vector<int8_t> y(3);
  local_response_pixel(x.data(), 3, p, multiplier, y.data());
  EXPECT_EQ(y, (std::vector<int8_t>{50, 67, 0}));  // 1 / (1 + 2/2), 1 / (1 + 1/2), at 100 levels per unit
}

TEST(LocalResponseNormAttributes, OutOfRangeAreRefused) {
  const std::vector<ActShape> in = {{8, 4, 4}};
  EXPECT_NO_THROW(op_def(Op::LocalResponseNorm).shape(lrn(5, 1e-4f, 0.75f, 1.0f), in));
  EXPECT_THROW(op_def(Op::LocalResponseNorm).shape(lrn(0, 1e-4f, 0.75f, 1.0f), in), Error);
  EXPECT_THROW(op_def(Op::LocalResponseNorm).shape(lrn(16, 1e-4f, 0.75f, 1.0f), in), Error);
  EXPECT_THROW(op_def(Op::LocalResponseNorm).shape(lrn(5, -1.0f, 0.75f, 1.0f), in), Error);
  EXPECT_THROW(op_def(Op::LocalResponseNorm).shape(lrn(5, 1e-4f, NAN, 1.0f), in), Error);
  EXPECT_THROW(op_def(Op::LocalResponseNorm).shape(lrn(5, 1e-4f, 0.75f, 0.0f), in), Error);
}

}  // namespace
}  // namespace octet::ops
