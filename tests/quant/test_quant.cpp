// Calibration statistics, amax methods, fixed-point requantization, the
// quantized file format and the CPU integer runtime against the naive
// reference (zero tolerance) and the float simulation (1 LSB).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "calibrate/amax.h"
#include "calibrate/calibrate.h"
#include "common/error.h"
#include "common/requantize.h"
#include "common/safetensors.h"
#include "graph/ops/float_reference.h"
#include "graph/ordered_gemm.h"
#include "graph/patches.h"
#include "quant/fixed_point.h"
#include "quant/simulate.h"
#include "runtime/cpu/cpu_engine.h"
#include "runtime/cuda/op_support.h"
#include "tests/support/random_model.h"
#include "tests/ops/reference_int8.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

TEST(Requantize, RoundsHalfUpAndClamps) {
  const int32_t half = 1 << 30;  // multiplier 0.5 with shift 31
  EXPECT_EQ(requantize(3, half, 0, 0, 31, -128), 2);    // 1.5 -> 2
  EXPECT_EQ(requantize(-3, half, 0, 0, 31, -128), -1);  // -1.5 -> -1 (half-way up)
  EXPECT_EQ(requantize(-5, half, 0, 0, 31, -128), -2);  // -2.5 -> -2
  EXPECT_EQ(requantize(1000, half, 0, 0, 31, -128), 127);
  EXPECT_EQ(requantize(-1000, half, 0, 0, 31, -128), -128);
  EXPECT_EQ(requantize(-7, half, 0, 0, 31, 0), 0);      // fused ReLU
  EXPECT_EQ(requantize(10, half, 4, half, 31, -128), 7);  // residual: (10 + 4) * 0.5
  EXPECT_EQ(requantize(2147483647, 2147483647, 127, 2147483647, 62, -128), 1);  // no overflow at the extremes
}

// upsample_bilinear's division by its weights' sum: the bits of requantize with multiplier 1, half-way cases
// and the extremes of a 64 x 64 upsampling's sums (4 * 4096 * 255) included.
TEST(Requantize, ByAShiftIsRequantizeOfMultiplierOne) {
  std::mt19937 rng(51);
  std::uniform_int_distribution<int32_t> acc(-4 * 4096 * 255, 4 * 4096 * 255);
  for (int32_t shift = 2; shift <= 14; ++shift)
    for (int32_t zero_point : {0, -128, 5})
      for (int k = 0; k < 2000; ++k) {
        const int32_t a = k < 8 ? (k - 4) * (1 << (shift - 1)) : acc(rng);
        ASSERT_EQ(requantize_by_shift(a, shift, zero_point), requantize(a, 1, 0, 0, shift, -128, zero_point))
            << a << " >> " << shift << " + " << zero_point;
      }
}

// upsample_bilinear's division by a weights' sum that is no power of two (corners aligned: 121 for 6 -> 12 pixels
// both ways): the weighted mean rounded half up, as exact rational arithmetic in 64 bits says, at the extremes of
// 255 x the sum and at half-way cases; a shift's bits where the sum is a power of two.
TEST(Requantize, ByDivisionRoundsTheExactQuotientHalfUp) {
  std::mt19937 rng(52);
  for (const int32_t divisor : {1, 2, 3, 6, 121, 4095, 2111 * 3, 2047 * 2047, 1 << 22})
    for (const int32_t zero_point : {0, -128, 5}) {
      std::uniform_int_distribution<int32_t> acc(-255 * divisor, 255 * divisor);
      for (int k = 0; k < 3000; ++k) {
        int32_t a = acc(rng);
        if (k < 4) a = (k % 2 ? 1 : -1) * 255 * divisor;
        if (k >= 4 && k < 40 && divisor % 2 == 0) a = (k - 22) * divisor + divisor / 2;  // x.5 exactly
        const long double rounded = std::floor((2.0L * a + divisor) / (2.0L * divisor));  // exact: 64-bit mantissa
        const int64_t expected = std::clamp<int64_t>(static_cast<int64_t>(rounded) + zero_point, -128, 127);
        ASSERT_EQ(requantize_by_division(a, divisor, zero_point), expected) << a << " / " << divisor;
      }
    }
  std::uniform_int_distribution<int32_t> acc(-4 * 4096 * 255, 4 * 4096 * 255);
  for (int32_t shift = 1; shift <= 14; ++shift)
    for (int k = 0; k < 2000; ++k) {
      const int32_t a = acc(rng) >> (14 - shift);
      ASSERT_EQ(requantize_by_division(a, 1 << shift, -128), requantize_by_shift(a, shift, -128)) << a;
    }
}

TEST(Requantize, InputQuantizationRoundsHalfToEvenAndClamps) {
  EXPECT_EQ(quantize_input(0.5f, 5.0f), 2);   // 2.5 -> 2
  EXPECT_EQ(quantize_input(0.7f, 5.0f), 4);   // 3.5 -> 4
  EXPECT_EQ(quantize_input(100.0f, 5.0f), 127);
  EXPECT_EQ(quantize_input(-100.0f, 5.0f), -128);
  EXPECT_EQ(quantize_input(std::nanf(""), 5.0f), 0);
}

TEST(FixedPoint, EncodesMultipliersToThirtyOneBits) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> exponent(-30.0, 29.0);
  for (int i = 0; i < 1000; ++i) {
    const double m = std::pow(2.0, exponent(rng));
    const FixedPoint fp = to_fixed_point({m}, "test");
    ASSERT_GE(fp.shift, 1);
    ASSERT_LE(fp.shift, 62);
    EXPECT_GE(fp.multipliers[0], 1 << 30);
    EXPECT_NEAR(std::ldexp(double(fp.multipliers[0]), -fp.shift) / m, 1.0, 1e-9);
  }
}

TEST(FixedPoint, PairsShareOneShiftAndRefuseOverflow) {
  const FixedPoint fp = to_fixed_point({0.25, 0.001}, "add");
  EXPECT_EQ(fp.multipliers[0], 1 << 30);
  EXPECT_NEAR(std::ldexp(double(fp.multipliers[1]), -fp.shift), 0.001, 1e-9);
  EXPECT_NE(error_of([] { to_fixed_point({std::ldexp(1.0, 30)}, "conv7"); }).find("conv7"), std::string::npos);
  EXPECT_NE(error_of([] { to_fixed_point({-1.0}, "x"); }).find("negative"), std::string::npos);
  EXPECT_NE(error_of([] { to_fixed_point({std::ldexp(1.0, 31)}, "layer 'c'", 7); }).find("layer 'c' channel 7:"),
            std::string::npos);
  EXPECT_EQ(to_fixed_point({0.0}, "zero").multipliers[0], 0);
}

// From 2^-32 down a multiplier keeps the largest shift, 62, and
// llround(m x 2^62) as its multiplier (fewer than 31 bits), which represents
// it to half a unit of 2^-62; under 2^-63 it becomes 0 (its output is 0).
TEST(FixedPoint, TinyMultipliersKeepShift62AndRoundTheirBits) {
  for (const double m : {std::ldexp(1.0, -32), 1e-12, std::ldexp(3.0, -60), std::ldexp(2.7, -62),
                         std::ldexp(1.0, -62), 1e-19}) {
    const FixedPoint fp = to_fixed_point({m}, "tiny");
    EXPECT_EQ(fp.shift, 62) << m;
    ASSERT_EQ(fp.multipliers.size(), 1u);
    EXPECT_EQ(fp.multipliers[0], std::llround(std::ldexp(m, 62))) << m;
    EXPECT_LE(std::abs(std::ldexp(double(fp.multipliers[0]), -62) - m), std::ldexp(1.0, -63)) << m;
  }
  EXPECT_EQ(to_fixed_point({std::ldexp(1.0, -32)}, "tiny").multipliers[0], 1 << 30);
  EXPECT_EQ(to_fixed_point({std::ldexp(2.7, -62)}, "tiny").multipliers[0], 3);
  EXPECT_EQ(to_fixed_point({1e-19}, "tiny").multipliers[0], 0);  // 1e-19 x 2^62 = 0.46
  const FixedPoint zero = to_fixed_point({1e-25}, "tiny");
  EXPECT_EQ(zero.shift, 62);
  EXPECT_EQ(zero.multipliers[0], 0);
  // Its output: the largest accumulator requantizes to 0.
  EXPECT_EQ(requantize(2147483647, zero.multipliers[0], 0, 0, zero.shift, -128), 0);
}

TEST(TensorStats, HistogramGrowsByDoublingAndKeepsEveryCount) {
  TensorStats s;
  std::vector<float> a = {0.1f, -0.2f, 0.3f, 0.0f};
  s.add(a.data(), 4, "t");
  const double first_range = s.range();
  std::vector<float> b = {5.0f, -7.5f};
  s.add(b.data(), 2, "t");
  EXPECT_GE(s.range(), 7.5);
  EXPECT_NEAR(std::log2(s.range() / first_range), std::round(std::log2(s.range() / first_range)), 1e-9);
  int64_t total = 0;
  for (int64_t c : s.histogram()) total += c;
  EXPECT_EQ(total, 6);
  EXPECT_EQ(s.count(), 6);
  EXPECT_DOUBLE_EQ(s.abs_max(), 7.5);
  EXPECT_NEAR(s.min(), -7.5, 1e-9);
  EXPECT_NEAR(s.mean(), (0.1 - 0.2 + 0.3 + 5.0 - 7.5) / 6, 1e-6);
  std::vector<float> bad = {1.0f, std::nanf("")};
  EXPECT_NE(error_of([&] { s.add(bad.data(), 2, "layer2.0.conv1"); }).find("layer2.0.conv1: activation is NaN"),
            std::string::npos);
}

// The vectorised pass: exact min and max, sums to rounding, and a NaN or an
// infinity anywhere in a vector body or the tail is found.
TEST(TensorStats, VectorPassMatchesAPlainLoopAndFindsEveryBadValue) {
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  std::vector<float> v(1003);
  for (float& x : v) x = normal(rng);
  TensorStats s;
  s.add(v.data(), static_cast<int64_t>(v.size()), "t");
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  EXPECT_EQ(s.min(), *lo);
  EXPECT_EQ(s.max(), *hi);
  double sum = 0, sum_sq = 0;
  for (float x : v) {
    sum += x;
    sum_sq += double(x) * x;
  }
  EXPECT_NEAR(s.mean(), sum / 1003, 1e-12);
  EXPECT_NEAR(s.std(), std::sqrt(sum_sq / 1003 - (sum / 1003) * (sum / 1003)), 1e-12);
  for (size_t at : {size_t{0}, size_t{517}, size_t{1002}}) {
    std::vector<float> bad = v;
    bad[at] = at == 517 ? std::nanf("") : -INFINITY;
    const std::string want = at == 517 ? "t: activation is NaN" : "t: activation is infinite";
    EXPECT_NE(error_of([&] { TensorStats().add(bad.data(), static_cast<int64_t>(bad.size()), "t"); }).find(want),
              std::string::npos)
        << at;
  }
}

// The histogram's vector binning against a plain loop: a ReLU's output (runs
// of exact zeros, -0.0 among them), negative values, the maximum in the
// last bin, lengths that end inside a vector and a chunk.
TEST(TensorStats, HistogramBinsMatchAPlainLoop) {
  std::mt19937_64 rng(12);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t n : {int64_t{7}, int64_t{1003}, int64_t{70001}}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = std::max(0.0f, normal(rng));
    for (size_t i = 3; i < v.size(); i += 11) v[i] = -normal(rng);
    v[1] = -0.0f;
    TensorStats s;
    s.add(v.data(), n, "t");
    std::vector<int64_t> want(TensorStats::kBins, 0);
    const double scale = TensorStats::kBins / s.range();
    for (float x : v) ++want[std::min(static_cast<int>(std::abs(double(x)) * scale), TensorStats::kBins - 1)];
    EXPECT_EQ(s.histogram(), want) << n;
  }
}

// im2col rows against one tap at a time, zero outside the image: kernels
// wider than the image, strides, padding on every side, dilated kernels
// (taps outside on both sides of a row, or every tap of a row outside),
// grouped convs' channel slices.
TEST(GatherPatches, MatchesTapByTapIncludingBorders) {
  struct Case {
    int c, h, w, kernel, stride, padding, dilation = 1, groups = 1;
  };
  for (const Case& k : {Case{3, 5, 7, 3, 1, 1}, Case{4, 6, 6, 3, 2, 1}, Case{2, 4, 3, 5, 1, 2}, Case{5, 3, 2, 7, 2, 3},
                        Case{1, 6, 5, 1, 2, 0}, Case{6, 8, 8, 5, 1, 0}, Case{3, 7, 9, 3, 1, 2, 2},
                        Case{2, 6, 5, 3, 2, 3, 3}, Case{4, 4, 4, 3, 1, 3, 3}, Case{1, 9, 8, 5, 2, 4, 2},
                        Case{2, 3, 1, 2, 1, 2, 3}, Case{6, 7, 7, 3, 1, 2, 2, 3}, Case{4, 6, 6, 3, 1, 1, 1, 2}}) {
    Node n;
    n.op = Op::Conv2d;
    n.kernel = k.kernel;
    n.stride = k.stride;
    n.padding = k.padding;
    n.dilation = k.dilation;
    n.groups = k.groups;
    const ActShape in{k.c, k.h, k.w};
    const int span = (k.kernel - 1) * k.dilation + 1;
    const ActShape out{7, (k.h + 2 * k.padding - span) / k.stride + 1, (k.w + 2 * k.padding - span) / k.stride + 1};
    const int64_t batch = 2, K = patch_size(n, in), rows = patch_rows(n, out, batch), group_c = k.c / k.groups;
    std::vector<float> x(static_cast<size_t>(batch * in.numel()));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i);
    for (int g = 0; g < k.groups; ++g) {
      std::vector<float> got(static_cast<size_t>(rows * K), -1.0f);
      gather_patches(n, in, out, x.data(), 0, rows, got.data(), g);
      for (int64_t r = 0; r < rows; ++r)
        for (int ky = 0; ky < k.kernel; ++ky)
          for (int kx = 0; kx < k.kernel; ++kx)
            for (int c = 0; c < group_c; ++c) {
              const int64_t ox = r % out.w, oy = (r / out.w) % out.h, b = r / (int64_t(out.w) * out.h);
              const int64_t iy = oy * k.stride - k.padding + ky * k.dilation;
              const int64_t ix = ox * k.stride - k.padding + kx * k.dilation;
              const bool inside = iy >= 0 && iy < k.h && ix >= 0 && ix < k.w;
              const float want = inside ? x[((b * k.h + iy) * k.w + ix) * k.c + g * group_c + c] : 0.0f;
              ASSERT_EQ(got[r * K + (ky * k.kernel + kx) * group_c + c], want)
                  << "c" << k.c << " " << k.h << "x" << k.w << " k" << k.kernel << " s" << k.stride << " p"
                  << k.padding << " d" << k.dilation << " g" << g << "/" << k.groups << " row " << r;
            }
    }
  }
}

// A conv for the tests below: c x h x w in, out_c channels out.
struct ConvCase {
  int c, h, w, out_c, kernel, stride, padding, dilation = 1, groups = 1;
};

// The float executor's conv on random values (so that a different order of
// the sums would show) against the im2col GEMM it replaces: each channel
// group's patches through one OrderedGemm, then the bias, bit for bit, or
// quantize's output would change with it.
void expect_im2col_gemm_bits(const ConvCase& k, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Node n;
  n.op = Op::Conv2d;
  n.kernel = k.kernel, n.stride = k.stride, n.padding = k.padding, n.dilation = k.dilation, n.groups = k.groups;
  n.channels = k.out_c;
  const ActShape in{k.c, k.h, k.w};
  const int span = (k.kernel - 1) * k.dilation + 1;
  const ActShape out{k.out_c, (k.h + 2 * k.padding - span) / k.stride + 1, (k.w + 2 * k.padding - span) / k.stride + 1};
  const int64_t batch = 2, K = patch_size(n, in), rows = patch_rows(n, out, batch), group_out = k.out_c / k.groups;
  FloatLayer layer;
  layer.weight = FloatTensor({k.out_c, K});
  for (float& v : layer.weight.data) v = normal(rng);
  for (int c = 0; c < k.out_c; ++c) layer.bias.push_back(normal(rng));
  FloatTensor x({batch, k.h, k.w, k.c});
  for (float& v : x.data) v = normal(rng);
  FloatTensor y({batch, out.h, out.w, out.c});
  ops::run_weighted_float({n, nullptr, {&x}, {in}, out, &layer, y});

  std::vector<float> patches(static_cast<size_t>(rows * K)), sums(static_cast<size_t>(rows * group_out));
  for (int g = 0; g < k.groups; ++g) {
    gather_patches(n, in, out, x.ptr(), 0, rows, patches.data(), g);
    const std::vector<float> b = transpose_padded(layer.weight.ptr() + g * group_out * K, group_out, K);
    OrderedGemm gemm;
    gemm.rows = rows, gemm.cols = group_out, gemm.depth = K;
    gemm.a = patches.data(), gemm.a_row_stride = K, gemm.a_depth_stride = 1;
    gemm.b = b.data(), gemm.b_depth_stride = ordered_gemm_padded(group_out);
    gemm.c = sums.data(), gemm.c_row_stride = group_out;
    ordered_gemm(gemm);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < group_out; ++c) {
        const float want = sums[r * group_out + c] + layer.bias[g * group_out + c];
        const float got = y.data[r * k.out_c + g * group_out + c];
        ASSERT_EQ(std::memcmp(&got, &want, sizeof want), 0)
            << "c" << k.c << " " << k.h << "x" << k.w << " o" << k.out_c << " k" << k.kernel << " s" << k.stride
            << " p" << k.padding << " d" << k.dilation << " g" << k.groups << ": row " << r << " channel "
            << g * group_out + c << ": " << got << " != " << want;
      }
  }
}

// The depthwise conv skips im2col, with the channels as vector lanes.
TEST(DepthwiseFloatConv, IsTheOrderedGemmOfItsPatchesBitForBit) {
  std::mt19937 rng(7);
  for (const ConvCase& k : {ConvCase{24, 8, 8, 24, 3, 1, 1, 1, 24}, ConvCase{7, 9, 6, 7, 3, 2, 1, 1, 7},
                            ConvCase{5, 7, 7, 5, 5, 1, 2, 1, 5}, ConvCase{16, 9, 9, 16, 3, 1, 2, 2, 16},
                            ConvCase{1, 4, 5, 1, 3, 2, 0, 1, 1}, ConvCase{9, 5, 5, 9, 1, 1, 0, 1, 9}})
    expect_im2col_gemm_bits(k, rng);
}

// The dense stride-1 conv skips im2col too (one GEMM per kernel row over the
// zero-padded input lines, its chains continued from one row to the next).
// The first five cases take that path (the 300-wide one splits each image
// into three tasks of lines: 6, 6 and 1); the narrow, strided, dilated and
// grouped ones still gather their patches.
TEST(DenseFloatConv, IsTheOrderedGemmOfItsPatchesBitForBit) {
  std::mt19937 rng(8);
  for (const ConvCase& k : {ConvCase{16, 32, 32, 16, 3, 1, 1}, ConvCase{5, 13, 300, 7, 3, 1, 1},
                            ConvCase{19, 16, 17, 33, 1, 1, 0}, ConvCase{3, 9, 40, 6, 5, 1, 2},
                            ConvCase{6, 10, 40, 16, 3, 1, 0}, ConvCase{16, 8, 8, 16, 3, 1, 1},
                            ConvCase{6, 14, 14, 16, 5, 1, 0}, ConvCase{8, 9, 9, 12, 3, 2, 1},
                            ConvCase{8, 9, 9, 12, 3, 1, 2, 2}, ConvCase{8, 9, 9, 12, 3, 1, 1, 1, 2}})
    expect_im2col_gemm_bits(k, rng);
}

TensorStats laplace_stats(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 2 ? 1.0f : -1.0f) * e(rng);
  TensorStats s;
  s.add(v.data(), n, "laplace");
  return s;
}

// The entropy and MSE searches again, written plainly: every candidate clip
// bin i from 128 (one bin per positive int8 level) to the histogram's end,
// each objective computed from scratch, the best kept.

// TensorRT's entropy calibration at clip bin i: KL(P || Q). P: the first i
// bins with every count beyond folded into bin i-1. Q: the first i bins
// (without the folded counts) merged into 128 levels, each level's count
// spread evenly over its non-empty bins. A bin where P has mass and Q none
// costs 40 x its mass, as calibrate/amax.cpp does.
double entropy_divergence(const std::vector<int64_t>& h, int i) {
  std::vector<double> p(h.begin(), h.begin() + i), q(static_cast<size_t>(i), 0.0);
  for (size_t b = static_cast<size_t>(i); b < h.size(); ++b) p[i - 1] += static_cast<double>(h[b]);
  for (int level = 0; level < 128; ++level) {
    const int start = static_cast<int>(std::floor(level * i / 128.0));
    const int end = level == 127 ? i : static_cast<int>(std::floor((level + 1) * i / 128.0));
    double total = 0;
    int nonzero = 0;
    for (int b = start; b < end; ++b) total += static_cast<double>(h[b]), nonzero += h[b] != 0;
    for (int b = start; b < end; ++b) q[b] = h[b] != 0 ? total / nonzero : 0.0;
  }
  double p_sum = 0, q_sum = 0;
  for (int b = 0; b < i; ++b) p_sum += p[b], q_sum += q[b];
  double kl = 0;
  for (int b = 0; b < i; ++b) {
    if (p[b] == 0) continue;
    const double pn = p[b] / p_sum, qn = q[b] / q_sum;
    kl += qn > 0 ? pn * std::log(pn / qn) : pn * 40.0;
  }
  return kl;
}

double brute_force_entropy_amax(const TensorStats& s) {
  std::vector<int64_t> h = s.histogram();
  h[0] = h[1];  // exact zeros (a ReLU's spike) count as their neighbours, as in pytorch-quantization
  int last_nonzero = 0;
  for (int b = 0; b < TensorStats::kBins; ++b)
    if (h[b]) last_nonzero = b;
  if (last_nonzero < 128) return s.abs_max();
  std::vector<double> kl(static_cast<size_t>(last_nonzero + 2), std::numeric_limits<double>::infinity());
  for (int i = 128; i <= last_nonzero + 1; ++i) kl[i] = entropy_divergence(h, i);
  return std::min(s.abs_max(), entropy_threshold(kl) * s.bin_width());
}

// Squared error of quantizing every bin's centre with 127 levels up to amax.
double quantization_error(const std::vector<int64_t>& h, double width, double amax, int levels) {
  const double step = amax / levels;
  double err = 0;
  for (size_t b = 0; b < h.size(); ++b) {
    if (h[b] == 0) continue;
    const double centre = (static_cast<double>(b) + 0.5) * width;
    const double q = std::min(std::floor(centre / step + 0.5), double(levels)) * step;
    err += static_cast<double>(h[b]) * (centre - q) * (centre - q);
  }
  return err;
}

double brute_force_mse_amax(const TensorStats& s, int levels = 127) {
  std::vector<double> err(TensorStats::kBins + 1, std::numeric_limits<double>::infinity());
  for (int i = 128; i <= TensorStats::kBins; ++i)
    err[i] = quantization_error(s.histogram(), s.bin_width(), i * s.bin_width(), levels);
  return std::min(s.abs_max(), mse_threshold(err) * s.bin_width());  // ties: the smallest
}

TEST(Amax, MethodsOnALaplaceDistribution) {
  const TensorStats s = laplace_stats(1 << 20, 3);
  const double max = compute_amax(s, AmaxMethod::Max);
  EXPECT_DOUBLE_EQ(max, s.abs_max());
  // |x| ~ Exp(1): the 99.99th percentile is ln(10^4) = 9.21.
  EXPECT_NEAR(compute_amax(s, AmaxMethod::Percentile, 99.99), std::log(1e4), 0.3);
  EXPECT_NEAR(compute_amax(s, AmaxMethod::Percentile, 99.0), std::log(100.0), 0.1);
  EXPECT_NEAR(compute_amax(s, AmaxMethod::Sigma3), 3 * std::sqrt(2.0), 0.05);  // Laplace(1): std sqrt(2)
  const double entropy = compute_amax(s, AmaxMethod::Entropy), mse = compute_amax(s, AmaxMethod::Mse);
  EXPECT_EQ(entropy, brute_force_entropy_amax(s));
  EXPECT_EQ(mse, brute_force_mse_amax(s));
  // Both clip the heavy tail well below its maximum.
  EXPECT_LT(entropy, 0.8 * max);
  EXPECT_LT(mse, 0.8 * max);
}

// The same searches on histograms whose shape matters to them: a ReLU's
// output (half exact zeros), a bulk with far outliers (empty bins between,
// so some candidates fold the outliers into an empty bin), eight spikes
// (mostly empty bins, where candidates tie), and a bulk within the first 128
// bins below one far maximum (MSE's best is next to the smallest candidate).
TEST(Amax, EntropyAndMseAreTheBestCandidatesOfTheirHistogram) {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::uniform_int_distribution<int> eighths(1, 8);
  std::vector<float> relu(200000), outliers(100000), spikes(10000), lone_max(1 << 22);
  for (float& x : relu) x = std::max(0.0f, normal(rng));
  for (size_t i = 0; i < outliers.size(); ++i) outliers[i] = i % 5000 == 0 ? 40.0f + uniform(rng) : uniform(rng);
  for (float& x : spikes) x = static_cast<float>(eighths(rng)) / 8.0f;
  for (float& x : lone_max) x = uniform(rng);
  lone_max[0] = 16.5f;  // bin width 16.5 / 2048: the bulk [0, 1) fills bins 0 to 124
  for (const auto& [name, values] : {std::make_pair("relu", &relu), std::make_pair("outliers", &outliers),
                                     std::make_pair("spikes", &spikes), std::make_pair("lone maximum", &lone_max)}) {
    TensorStats s;
    s.add(values->data(), static_cast<int64_t>(values->size()), name);
    EXPECT_EQ(compute_amax(s, AmaxMethod::Entropy), brute_force_entropy_amax(s)) << name;
    EXPECT_EQ(compute_amax(s, AmaxMethod::Mse), brute_force_mse_amax(s)) << name;
    // An unsigned grid (255 levels): a finer step, so a clip no lower.
    const double unsigned_mse = compute_amax(s, AmaxMethod::Mse, 99.99, 255);
    EXPECT_EQ(unsigned_mse, brute_force_mse_amax(s, 255)) << name;
    EXPECT_GE(unsigned_mse, compute_amax(s, AmaxMethod::Mse)) << name;
  }
}

TEST(Amax, EntropyTiesWithinRoundingGoToTheLargestThreshold) {
  const double none = std::numeric_limits<double>::infinity();
  EXPECT_EQ(entropy_threshold({none, 0.5, 0.3, 0.3 * (1 + 1e-12), 0.4}), 3);
  EXPECT_EQ(entropy_threshold({none, 0.3, 0.3 * (1 + 1e-6), none}), 1);
  EXPECT_EQ(entropy_threshold({none, 1e-14, 0.0, 1e-3}), 2);
  EXPECT_THROW(entropy_threshold({none, none}), Error);
}

TEST(Amax, MseTiesWithinRoundingGoToTheSmallestThreshold) {
  const double none = std::numeric_limits<double>::infinity();
  EXPECT_EQ(mse_threshold({none, 0.5, 0.3 * (1 + 1e-12), 0.3, 0.4}), 2);
  EXPECT_EQ(mse_threshold({none, 0.3 * (1 + 1e-6), 0.3, none}), 2);
  EXPECT_THROW(mse_threshold({none, none}), Error);
}

TEST(Amax, AllZeroTensorHasZeroAmax) {
  TensorStats s;
  std::vector<float> zeros(100, 0.0f);
  s.add(zeros.data(), 100, "zeros");
  for (AmaxMethod m : statistic_methods()) EXPECT_EQ(compute_amax(s, m), 0.0) << amax_method_name(m);
  EXPECT_NE(error_of([] { compute_amax(TensorStats(), AmaxMethod::Max); }).find("no calibration data"),
            std::string::npos);
}

struct RuntimeCase {
  std::string name;
  std::string model;
  int channels, size;
  bool batch_norm;
  std::string method, granularity, scheme, rounding;
  int batch;
  bool unsigned_activations = false;
};

QuantizeOptions options_of(const RuntimeCase& c) {
  QuantizeOptions o;
  o.method = amax_method_from_name(c.method);
  o.per_channel = c.granularity == "per-channel";
  o.scheme = c.scheme;
  o.weight_rounding = c.rounding;
  o.auto_samples = 32;
  o.gptq_samples = 32;
  o.unsigned_activations = c.unsigned_activations;
  return o;
}

class RuntimeExactness : public ::testing::TestWithParam<RuntimeCase> {};

// The CPU runtime against the naive reference, every node, zero tolerance; and
// against the float simulation of each node fed the runtime's own inputs: at
// most 1 LSB per output.
TEST_P(RuntimeExactness, MatchesReferenceExactlyAndSimulationWithinOneLsb) {
  const RuntimeCase& c = GetParam();
  const ModelOptions mo{c.channels, c.size, c.size, 10, c.batch_norm};
  const Checkpoint checkpoint = c.model == "grouped-test"   ? random_grouped_checkpoint(5)
                                : c.model == "dilated-test" ? random_dilated_checkpoint(5)
                                                            : random_checkpoint(c.model, mo, 5);
  const QuantizedModel qm = quantize_random(checkpoint, options_of(c));
  EXPECT_EQ(qm.has_zero_points(), c.unsigned_activations);
  const CpuEngine engine(qm);
  const std::vector<float> images = random_images(c.batch, engine.shapes()[0], 99);

  std::vector<ActTensor> runtime_values(qm.graph.nodes.size());
  const Int32Tensor logits = engine.run(images.data(), c.batch, [&](int node, const int8_t* v, int64_t count) {
    const ActShape s = engine.shapes()[node];
    runtime_values[node] = ActTensor({c.batch, s.h, s.w, s.c}, hook_values(qm, node, v, count));
  });
  const ReferenceRun ref = reference_run(qm, images.data(), c.batch);
  EXPECT_EQ(logits.data, ref.logits.data) << "int32 logits differ from the reference";
  for (size_t i = 0; i + 1 < qm.graph.nodes.size(); ++i) {
    if (qm.graph.nodes[i].op == Op::Flatten) continue;  // a copy, in another element order
    EXPECT_EQ(runtime_values[i].data, nchw_to_nhwc(ref.values[i]).data) << "node " << qm.graph.nodes[i].name;
  }

  const FloatExecutor sim(dequantized_model(qm));
  std::vector<FloatTensor> dequantized(qm.graph.nodes.size());
  int64_t outputs = 0, off_by_one = 0;
  for (size_t i = 0; i + 1 < qm.graph.nodes.size(); ++i) {
    const ActTensor& q = runtime_values[i];
    dequantized[i] = FloatTensor(q.shape);
    for (int64_t k = 0; k < q.numel(); ++k)
      dequantized[i].data[k] = float(q.data[k] - qm.quant[i].zero_point) / qm.quant[i].scale;
    if (i == 0) continue;
    const ActTensor levels =
        fake_quantized_levels(qm, static_cast<int>(i), sim.run_node(static_cast<int>(i), dequantized));
    for (int64_t k = 0; k < q.numel(); ++k) {
      const int diff = std::abs(int(levels.data[k]) - int(q.data[k]));
      ASSERT_LE(diff, 1) << "node " << qm.graph.nodes[i].name << " element " << k;
      off_by_one += diff;
      ++outputs;
    }
  }
  const FloatTensor sim_logits = sim.run_node(qm.output(), dequantized);
  const FloatTensor& logit_scale = qm.quant[qm.output()].logit_scale;
  for (int64_t k = 0; k < logits.numel(); ++k) {
    const double expected = sim_logits.data[k] / logit_scale.data[k % logit_scale.numel()];
    EXPECT_NEAR(logits.data[k], expected, 1e-3 * std::abs(expected) + 2.0);
  }
  std::printf("%s: %lld int8 outputs, %.3f%% one LSB from the float simulation\n", c.name.c_str(),
              static_cast<long long>(outputs), 100.0 * off_by_one / std::max<int64_t>(outputs, 1));
}

INSTANTIATE_TEST_SUITE_P(
    Models, RuntimeExactness,
    ::testing::Values(RuntimeCase{"lenet5_fmnist", "lenet5", 1, 28, true, "max", "per-channel", "octet", "nearest", 9},
                      RuntimeCase{"lenet5_cifar_lab", "lenet5", 3, 32, true, "max", "per-tensor", "lab", "nearest", 5},
                      RuntimeCase{"lenet5_cifar_auto_gptq", "lenet5", 3, 32, true, "auto", "per-channel", "octet", "gptq", 4},
                      RuntimeCase{"resnet20_entropy", "resnet20", 3, 32, true, "entropy", "per-channel", "octet", "nearest", 3},
                      RuntimeCase{"resnet20_nobn_pertensor", "resnet20", 3, 32, false, "percentile", "per-tensor", "octet", "gptq", 2},
                      RuntimeCase{"resnet18_mse", "resnet18", 3, 32, true, "mse", "per-channel", "octet", "nearest", 1},
                      RuntimeCase{"grouped_auto_gptq", "grouped-test", 3, 16, true, "auto", "per-channel", "octet", "gptq", 4},
                      RuntimeCase{"grouped_lab", "grouped-test", 3, 16, true, "max", "per-tensor", "lab", "nearest", 3},
                      RuntimeCase{"dilated_auto_gptq", "dilated-test", 3, 16, true, "auto", "per-channel", "octet", "gptq", 3},
                      RuntimeCase{"lenet5_fmnist_unsigned",
                                  "lenet5", 1, 28, true, "max", "per-channel", "octet", "nearest", 9, true},
                      RuntimeCase{"lenet5_cifar_auto_gptq_unsigned",
                                  "lenet5", 3, 32, true, "auto", "per-channel", "octet", "gptq", 4, true},
                      RuntimeCase{"resnet20_entropy_unsigned",
                                  "resnet20", 3, 32, true, "entropy", "per-channel", "octet", "nearest", 3, true},
                      RuntimeCase{"grouped_auto_gptq_unsigned",
                                  "grouped-test", 3, 16, true, "auto", "per-channel", "octet", "gptq", 4, true},
                      RuntimeCase{"dilated_mse_unsigned",
                                  "dilated-test", 3, 16, true, "mse", "per-channel", "octet", "nearest", 3, true}),
    [](const auto& info) { return info.param.name; });

// quantize_checkpoint records GPTQ's statistics and auto's logits during the
// calibration pass; quantize() without that record runs the pass itself. The
// two must give the same model, bit for bit.
TEST(FloatPassRecord, RecordedDuringCalibrationGivesTheSameModel) {
  // 16x16 images: a quarter of the work of 32x32, for the sanitizer run too.
  const Checkpoint c = random_checkpoint("resnet20", ModelOptions{3, 16, 16, 10, true}, 7);
  const FloatModel folded = fold_for_inference(c.graph, c.params);
  const FloatExecutor executor(folded);
  QuantizeOptions o;  // auto and GPTQ: both use the record
  o.auto_samples = 40;  // not a multiple of the batch: the record stops inside one
  o.gptq_samples = 72;
  const int64_t count = 96;
  const std::vector<float> images = random_images(count, executor.shapes()[0], 3);
  const Calibration plain = calibrate(executor, images, count, 32);
  FloatPassRecord record = float_pass_record(executor, o, count);
  const Calibration recorded = calibrate(executor, images, count, 32,
                                         [&](int node, const FloatTensor& act, int64_t first) {
                                           record.observe(node, act, first);
                                         });
  const QuantizedModel own_pass = quantize(c, folded, plain, o);
  const QuantizedModel from_record = quantize(c, folded, recorded, o, nullptr, &record);
  ASSERT_EQ(own_pass.quant.size(), from_record.quant.size());
  for (size_t i = 0; i < own_pass.quant.size(); ++i) {
    EXPECT_EQ(own_pass.quant[i].scale, from_record.quant[i].scale) << own_pass.graph.nodes[i].name;
    EXPECT_EQ(own_pass.quant[i].method, from_record.quant[i].method) << own_pass.graph.nodes[i].name;
    EXPECT_EQ(own_pass.quant[i].weight.data, from_record.quant[i].weight.data) << own_pass.graph.nodes[i].name;
  }
}

TEST(EdgeCases, AnAlwaysZeroTensorGetsScaleOneAndRunsToZeros) {
  const ModelOptions mo{1, 28, 28};
  Checkpoint c = random_checkpoint("lenet5", mo, 2);
  std::fill(c.params["conv2.weight"].data.begin(), c.params["conv2.weight"].data.end(), 0.0f);
  std::fill(c.params["conv2.bias"].data.begin(), c.params["conv2.bias"].data.end(), 0.0f);
  QuantizeOptions o;
  o.method = AmaxMethod::Entropy;
  const QuantizedModel qm = quantize_random(c, o);
  const int conv2 = qm.graph.find("conv2");
  EXPECT_EQ(qm.quant[conv2].scale, 1.0f);
  EXPECT_EQ(qm.quant[conv2].method, "zero tensor (scale 1)");
  const CpuEngine engine(qm);
  const std::vector<float> images = random_images(2, engine.shapes()[0], 4);
  bool checked = false;
  engine.run(images.data(), 2, [&](int node, const int8_t* v, int64_t count) {
    if (node != conv2) return;
    checked = true;
    for (int64_t k = 0; k < count; ++k) EXPECT_EQ(v[k], 0);
  });
  EXPECT_TRUE(checked);
}

TEST(EdgeCases, NanWeightsAreRefusedNamingTheLayer) {
  Checkpoint c = random_checkpoint("lenet5", ModelOptions{}, 2);
  c.params["fc2.weight"].data[17] = std::nanf("");
  EXPECT_NE(error_of([&] { quantize_random(c, QuantizeOptions{}); }).find("'fc2': weights contain NaN"),
            std::string::npos);
}

TEST(EdgeCases, InfiniteActivationsAreRefusedDuringCalibration) {
  const Checkpoint c = random_checkpoint("lenet5", ModelOptions{}, 2);
  const FloatExecutor executor(fold_for_inference(c.graph, c.params));
  std::vector<float> images = random_images(4, executor.shapes()[0], 1);
  images[100] = INFINITY;
  EXPECT_NE(error_of([&] { calibrate(executor, images, 4); }).find("infinite during calibration"), std::string::npos);
}

TEST(EdgeCases, EmptyCalibrationSetIsRefused) {
  const Checkpoint c = random_checkpoint("lenet5", ModelOptions{}, 2);
  const FloatExecutor executor(fold_for_inference(c.graph, c.params));
  EXPECT_NE(error_of([&] { calibrate(executor, {}, 0); }).find("calibration set is empty"), std::string::npos);
  EXPECT_NE(error_of([&] { calibration_indices(100, 0); }).find("calibration set is empty"), std::string::npos);
  EXPECT_NE(error_of([&] { calibration_indices(0, 16); }).find("has no images"), std::string::npos);
}

TEST(EdgeCases, AScaleThatWouldOverflowTheMultiplierIsRefused) {
  Checkpoint c = random_checkpoint("lenet5", ModelOptions{}, 2);
  // conv2's output is never above 1e-12 (zero weights, a tiny positive bias): its scale would be
  // over 2^30 times the accumulator's, which int32 fixed point cannot represent.
  std::fill(c.params["conv2.weight"].data.begin(), c.params["conv2.weight"].data.end(), 0.0f);
  std::fill(c.params["conv2.bias"].data.begin(), c.params["conv2.bias"].data.end(), 1e-12f);
  const std::string msg = error_of([&] { quantize_random(c, quick_quantize_options()); });
  EXPECT_NE(msg.find("too large for int32 fixed point"), std::string::npos) << msg;
}

class QuantizedFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    QuantizeOptions o;
    o.method = AmaxMethod::Percentile;
    o.gptq_samples = 16;
    model_ = new QuantizedModel(quantize_random(random_checkpoint("resnet20", ModelOptions{}, 8), o, 16));
  }
  static void TearDownTestSuite() { delete model_; }
  void SetUp() override { save_quantized_model(*model_, dir_.path("good.octet")); }
  // Loads the good file's container, lets `edit` damage it, saves and loads it as a model.
  std::string load_after(const std::function<void(TensorFile&)>& edit) {
    TensorFile file = TensorFile::load(dir_.path("good.octet"));
    edit(file);
    file.save(dir_.path("bad.octet"));
    return error_of([&] { load_quantized_model(dir_.path("bad.octet")); });
  }
  TempDir dir_;
  static QuantizedModel* model_;
};

QuantizedModel* QuantizedFile::model_ = nullptr;

// Shape and values of one tensor of a node's record, as saved and as loaded.
template <typename T>
void expect_same_tensor(const Tensor<T>& loaded, const Tensor<T>& saved, const std::string& what) {
  EXPECT_EQ(loaded.shape, saved.shape) << what;
  EXPECT_EQ(loaded.data, saved.data) << what;
}

// Every field the file holds comes back as it was written: the graph, every
// node's scale, amax, method and tensors, and the model's metadata.
TEST_F(QuantizedFile, RoundTripKeepsEverything) {
  const QuantizedModel loaded = load_quantized_model(dir_.path("good.octet"));
  const QuantizedModel& saved = *model_;
  ASSERT_EQ(loaded.graph.to_json(), saved.graph.to_json());
  ASSERT_EQ(loaded.quant.size(), saved.quant.size());
  int residuals = 0;
  for (size_t i = 0; i < loaded.quant.size(); ++i) {
    const NodeQuant &got = loaded.quant[i], &want = saved.quant[i];
    const std::string node = "node " + std::to_string(i) + " '" + saved.graph.nodes[i].name + "'";
    EXPECT_EQ(got.scale, want.scale) << node;
    EXPECT_EQ(got.amax, want.amax) << node;
    EXPECT_EQ(got.method, want.method) << node;
    expect_same_tensor(got.weight, want.weight, node + " weight");
    expect_same_tensor(got.weight_scale, want.weight_scale, node + " weight_scale");
    expect_same_tensor(got.bias, want.bias, node + " bias");
    expect_same_tensor(got.multiplier, want.multiplier, node + " multiplier");
    expect_same_tensor(got.shift, want.shift, node + " shift");
    expect_same_tensor(got.skip_multiplier, want.skip_multiplier, node + " skip_multiplier");
    expect_same_tensor(got.logit_scale, want.logit_scale, node + " logit_scale");
    residuals += !want.skip_multiplier.data.empty();
  }
  // The model holds every kind of tensor, so that none goes unchecked.
  EXPECT_GT(residuals, 0);
  EXPECT_EQ(loaded.quant.back().logit_scale.numel(), saved.num_classes());
  EXPECT_EQ(loaded.model, saved.model);
  EXPECT_EQ(loaded.dataset, saved.dataset);
  EXPECT_EQ(loaded.classes, saved.classes);
  EXPECT_EQ(loaded.mean, saved.mean);
  EXPECT_EQ(loaded.std, saved.std);
  EXPECT_EQ(loaded.method, saved.method);
  EXPECT_EQ(loaded.granularity, saved.granularity);
  EXPECT_EQ(loaded.scheme, saved.scheme);
  EXPECT_EQ(loaded.weight_rounding, "gptq");
  EXPECT_EQ(loaded.calibration_samples, saved.calibration_samples);
  EXPECT_EQ(loaded.source, saved.source);
}

TEST_F(QuantizedFile, RefusesDamagedFilesNamingWhatIsWrong) {
  EXPECT_NE(load_after([](TensorFile& f) { f.metadata["format_version"] = "99"; }).find("version 99 is not supported"),
            std::string::npos);
  EXPECT_NE(load_after([](TensorFile& f) { f.put("conv1.weight", FloatTensor({16, 3, 3, 3})); })
                .find("'conv1.weight' has dtype F32, expected I8"),
            std::string::npos);
  EXPECT_NE(load_after([](TensorFile& f) { f.put("layer1.0.conv1.bias", Int32Tensor({15})); })
                .find("layer1.0.conv1'.bias has shape [15], expected [16]"),
            std::string::npos);
  EXPECT_NE(load_after([](TensorFile& f) { f.put("conv1.shift", Int32Tensor({16}, 0)); }).find(".shift 0 is outside [1, 62]"),
            std::string::npos);
  EXPECT_NE(load_after([](TensorFile& f) { f.put("stray", Int8Tensor({3})); }).find("unexpected tensor 'stray'"),
            std::string::npos);
  EXPECT_NE(load_after([](TensorFile& f) {
              f.metadata["graph"].replace(f.metadata["graph"].find("\"inputs\":[0]"), 12, "\"inputs\":[9]");
            }).find("is not an earlier node"),
            std::string::npos);
  EXPECT_NE(load_after([](TensorFile& f) { f.metadata["format"] = "octet-checkpoint"; }).find("not an octet quantized model"),
            std::string::npos);
}

TEST_F(QuantizedFile, RefusesMissingTensorsAndBadOffsets) {
  // Drop a tensor by rewriting the container without it.
  TensorFile file = TensorFile::load(dir_.path("good.octet"));
  TensorFile pruned;
  pruned.metadata = file.metadata;
  for (const auto& [name, t] : file.tensors()) {
    if (name == "linear.logit_scale") continue;
    if (t.dtype == DType::I8) pruned.put(name, file.get<int8_t>(name));
    if (t.dtype == DType::I32) pruned.put(name, file.get<int32_t>(name));
    if (t.dtype == DType::F32) pruned.put(name, file.get<float>(name));
  }
  pruned.save(dir_.path("pruned.octet"));
  EXPECT_NE(error_of([&] { load_quantized_model(dir_.path("pruned.octet")); }).find("'linear.logit_scale' is missing"),
            std::string::npos);

  std::vector<uint8_t> bytes = read_bytes(dir_.path("good.octet"));
  bytes.resize(bytes.size() - 10);
  std::ofstream(dir_.path("short.octet"), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  EXPECT_NE(error_of([&] { load_quantized_model(dir_.path("short.octet")); }).find("truncated"), std::string::npos);
}

// A dilated network's file: each conv's dilation comes back, the graph JSON
// names "dilation" only where it is not 1 (undilated models' files keep their
// bytes), and the loaded model runs on the CPU to the reference's logits.
TEST(DilatedFile, KeepsEachConvsDilationAndItsLogits) {
  const QuantizedModel saved = quantize_random(random_dilated_checkpoint(3), quick_quantize_options(), 16);
  TempDir dir;
  save_quantized_model(saved, dir.path("dilated.octet"));
  const QuantizedModel loaded = load_quantized_model(dir.path("dilated.octet"));
  std::map<std::string, int> dilations;
  for (const Node& n : loaded.graph.nodes)
    if (n.op == Op::Conv2d) dilations[n.name] = n.dilation;
  EXPECT_EQ(dilations, (std::map<std::string, int>{{"stem", 1}, {"dil", 2}, {"dw", 3}, {"project", 1}, {"gc", 2}}));
  const std::string json = loaded.graph.to_json();
  int written = 0;
  for (size_t at = json.find("\"dilation\""); at != std::string::npos; at = json.find("\"dilation\"", at + 1))
    ++written;
  EXPECT_EQ(written, 3) << json;
  const int64_t batch = 3;
  const std::vector<float> images = random_images(batch, loaded.graph.shapes()[0], 4);
  EXPECT_EQ(CpuEngine(loaded).run(images.data(), batch).data, reference_run(saved, images.data(), batch).logits.data);
  // The CUDA backends run dilated convs (their grouped kernel).
  EXPECT_EQ(cuda::why_model_unsupported(loaded), "");
}

}  // namespace
}  // namespace octet
