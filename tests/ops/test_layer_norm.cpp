// LayerNorm's int8 form (graph/ops/layer_norm.h) against the normalisation
// computed in double from the dequantized values: within half an output level
// (its rounding alone), on random pixel statistics with and
// without zero points, int16 inputs, and the degenerate pixels; and the
// AVX-512 kernel against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "graph/ops/layer_norm.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/layer_norm_simd.h"

namespace octet::ops {
namespace {

// The level of each channel from the dequantized values, in double.
template <typename T>
std::vector<double> exact_levels(const std::vector<T>& x, const LayerNormLevels& p) {
  const size_t C = x.size();
  double mean = 0, variance = 0;
  for (T v : x) mean += (v - p.input_zero_point) / p.input_scale / C;
  for (T v : x) variance += std::pow((v - p.input_zero_point) / p.input_scale - mean, 2) / C;
  std::vector<double> levels;
  for (T v : x) {
    const double normalised = ((v - p.input_zero_point) / p.input_scale - mean) / std::sqrt(variance + p.epsilon);
    levels.push_back(std::min(std::max(normalised * p.output_scale + p.output_zero_point, -128.0), 127.0));
  }
  return levels;
}

template <typename T>
double worst_difference(int64_t channels, int lowest, int highest, const LayerNormLevels& base, int pixels) {
  std::mt19937 rng(static_cast<uint32_t>(channels * 7 + highest));
  std::uniform_int_distribution<int> value(lowest, highest);
  LayerNormLevels p = base;
  p.channels = channels;
  double worst = 0;
  for (int k = 0; k < pixels; ++k) {
    std::vector<T> x(static_cast<size_t>(channels));
    for (T& v : x) v = static_cast<T>(value(rng));
    std::vector<int8_t> y(x.size());
    layer_norm_levels(x.data(), p, y.data());
    const std::vector<double> exact = exact_levels(x, p);
    for (size_t c = 0; c < x.size(); ++c) worst = std::max(worst, std::abs(y[c] - exact[c]));
  }
  return worst;
}

constexpr double kHalf = 0.5 + 1e-6;  // a rounded level, no more

TEST(LayerNormLevels, WithinHalfALevelOfTheNormalisationInDouble) {
  const LayerNormLevels plain{0, 40.0, 30.0, 0, 0, 1e-6};
  for (const int64_t channels : {2, 3, 16, 96, 768}) {
    EXPECT_LE(worst_difference<int8_t>(channels, -128, 127, plain, 200), kHalf) << channels << " channels";
    // A narrow range: the variance is a few levels, where epsilon counts.
    EXPECT_LE(worst_difference<int8_t>(channels, -3, 2, {0, 1000.0, 30.0, 0, 0, 1e-5}, 200), kHalf) << channels;
  }
  const LayerNormLevels shifted{0, 40.0, 25.0, -128, 17, 1e-6};  // zero points on both sides
  EXPECT_LE(worst_difference<int8_t>(96, -128, 127, shifted, 200), kHalf);
  EXPECT_LE(worst_difference<int16_t>(96, -30000, 30000, {0, 4000.0, 30.0, 5, -3, 1e-6}, 200), kHalf);  // wide input
}

TEST(LayerNormLevels, ConstantPixelsAreTheOutputZeroPoint) {
  std::vector<int8_t> x(12, 37), y(12);
  layer_norm_levels(x.data(), {12, 10.0, 30.0, 2, -5, 0.0}, y.data());  // epsilon 0: 0 / 0 made 0
  for (int8_t v : y) EXPECT_EQ(v, -5);
  layer_norm_levels(x.data(), {1, 10.0, 30.0, 2, 9, 1e-5}, y.data());  // one channel
  EXPECT_EQ(y[0], 9);
}

TEST(LayerNormLevels, SaturatesAtTheInt8Range) {
  std::vector<int8_t> x(64, 0), y(64);
  x[0] = 127;  // one outlier: sqrt(63) = 7.9 deviations, level 238 at 30 per unit
  layer_norm_levels(x.data(), {64, 10.0, 30.0, 0, 0, 1e-6}, y.data());
  EXPECT_EQ(y[0], 127);
  EXPECT_EQ(y[1], -4);  // -1/sqrt(63) * 30 = -3.78
}

// The AVX-512 kernel (runtime/cpu/layer_norm_vnni.cpp) gives layer_norm_levels' bits pixel by pixel:
// channel counts around its vectors of 16, 32 and 64 values, pixel counts around its groups of 8
// multipliers, zero points, and constant pixels without epsilon, whose multiplier must be 0, not a
// quotient by a zero root (0 x infinity is NaN); output scales whose levels leave int16 (the
// packed outputs saturate twice) and int32 (the form that clamps in double first). The operator
// harness reaches no constant pixel: its float check against LibTorch, whose 0 / 0 is NaN there,
// could not hold one.
TEST(LayerNormLevels, TheAvx512KernelGivesTheseBits) {
#if defined(__x86_64__)
  if (!cpu::kernel_path_supported(cpu::KernelPath::Avx512Vnni)) GTEST_SKIP() << "this CPU lacks AVX-512 VNNI";
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> value(-128, 127);
  const LayerNormLevels bases[] = {
      {0, 10.0, 30.0, 0, 0, 1e-5},     {0, 3.0, 80.0, -128, 3, 0.0}, {0, 100.0, 25.0, 5, -128, 0.5},
      {0, 10.0, 5000.0, -7, -20, 1e-5}, {0, 10.0, 1e9, 0, 9, 1e-5}};
  for (const int64_t channels : {1, 2, 15, 16, 17, 31, 32, 33, 48, 49, 64, 65, 96, 130, 600})
    for (LayerNormLevels p : bases)
      for (const int64_t pixels : {1, 7, 8, 13}) {
        p.channels = channels;
        std::vector<int8_t> x(static_cast<size_t>(pixels * channels)), expected(x.size()), got(x.size());
        for (int8_t& v : x) v = static_cast<int8_t>(value(rng));
        for (int64_t i = 0; i < pixels; i += 3)  // every third pixel constant
          std::fill(x.begin() + i * channels, x.begin() + (i + 1) * channels, x[static_cast<size_t>(i * channels)]);
        for (int64_t i = 1; i < pixels; i += 3) {  // and the next constant but for one value: its level is the largest
          std::fill(x.begin() + i * channels, x.begin() + (i + 1) * channels, int8_t{-100});
          x[static_cast<size_t>(i * channels + channels / 2)] = 120;
        }
        for (int64_t i = 0; i < pixels; ++i)
          layer_norm_levels(x.data() + i * channels, p, expected.data() + i * channels);
        cpu::vnni::layer_norm(x.data(), pixels, p, got.data());
        EXPECT_EQ(got, expected) << channels << " channels, " << pixels << " pixels, epsilon " << p.epsilon
                                 << ", zero points " << p.input_zero_point << " and " << p.output_zero_point;
      }
#else
  GTEST_SKIP() << "not an x86-64 build: no AVX-512 kernel";
#endif
}

}  // namespace
}  // namespace octet::ops
