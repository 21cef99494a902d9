// GroupNorm's int8 form (graph/ops/group_norm.h), through the operator's int8
// reference, against the normalisation computed in double from the
// dequantized values: within half an output level (its rounding alone) for
// ResNet-GN's groups, InstanceNorm's (a channel each) and one group of all,
// zero points on both sides, an affine per channel and a fused ReLU; the
// largest group octet takes at the widest values (its integer statistics at
// their bound) exact; constant groups at
// the output zero point; attributes out of range refused; the model file's
// affine kept, and refused short or not finite; and the AVX-512 kernel
// against group_norm_level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/error.h"
#include "common/file_io.h"
#include "graph/op.h"
#include "graph/ops/group_norm.h"
#include "runtime/cpu/group_norm_simd.h"
#include "runtime/cpu/kernels.h"
#include "tests/ops/op_model.h"
#include "tests/support/test_util.h"

namespace octet::ops {
namespace {

Node group_norm(int groups, float epsilon) {
  Node n;
  n.op = Op::GroupNorm;
  n.groups = groups, n.epsilon = epsilon;
  return n;
}

struct Scales {
  double in, out;
  int32_t z_in, z_out;
};

// A random affine of `channels` (scales in [-1.5, 1.5], shifts in [-2, 2]).
std::pair<FloatTensor, FloatTensor> random_affine(int64_t channels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(-1.5f, 1.5f), shift(-2.0f, 2.0f);
  FloatTensor g({channels}), b({channels});
  for (float& v : g.data) v = scale(rng);
  for (float& v : b.data) v = shift(rng);
  return {g, b};
}

// The oracle's output of x ([N][C][H][W]); with n.bias, `affine`'s.
ActTensor levels(const ActTensor& x, const Node& n, const Scales& s,
                 const std::pair<FloatTensor, FloatTensor>& affine = {}) {
  NodeQuant q;
  q.scale = static_cast<float>(s.out), q.zero_point = s.z_out;
  if (n.bias) q.norm_scale = affine.first, q.norm_shift = affine.second;
  ActTensor y;
  Int32Tensor logits;
  op_def(Op::GroupNorm)
      .run_int8_reference({n, {&x}, q, x.dim(0), nullptr, false, y, logits, {float(s.in)}, {s.z_in}});
  return y;
}

// The largest difference between the oracle's levels and those of the normalisation in double.
double worst_difference(const ActTensor& x, const Node& n, const Scales& s,
                        const std::pair<FloatTensor, FloatTensor>& affine = {}) {
  const ActTensor y = levels(x, n, s, affine);
  const int64_t N = x.dim(0), C = x.dim(1), plane = x.dim(2) * x.dim(3), run = C / n.groups * plane;
  double worst = 0;
  for (int64_t g = 0; g < N * n.groups; ++g) {
    const int16_t* v = x.data.data() + g * run;  // NCHW: a group's values lie side by side
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < run; ++i) mean += (v[i] - s.z_in) / s.in / double(run);
    for (int64_t i = 0; i < run; ++i) variance += std::pow((v[i] - s.z_in) / s.in - mean, 2) / double(run);
    for (int64_t i = 0; i < run; ++i) {
      const size_t c = size_t(g % n.groups * (C / n.groups) + i / plane);
      double value = ((v[i] - s.z_in) / s.in - mean) / std::sqrt(variance + n.epsilon);
      if (n.bias) value = value * affine.first.data[c] + affine.second.data[c];
      if (n.relu) value = std::max(value, 0.0);
      const double exact = value * s.out + s.z_out;
      worst = std::max(worst, std::abs(y.data[size_t(g * run + i)] - std::clamp(exact, -128.0, 127.0)));
    }
  }
  return worst;
}

ActTensor random_levels(Shape shape, int lowest, int highest, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(lowest, highest);
  ActTensor x(std::move(shape));
  for (int16_t& v : x.data) v = static_cast<int16_t>(value(rng));
  return x;
}

constexpr double kHalf = 0.5 + 1e-6;  // a rounded level, no more

TEST(GroupNormLevels, WithinHalfALevelOfTheNormalisationInDouble) {
  const ActTensor x = random_levels({2, 12, 5, 4}, -128, 127, 1);
  for (const int groups : {1, 3, 6, 12}) {
    EXPECT_LE(worst_difference(x, group_norm(groups, 1e-5f), {40.0, 30.0, 0, 0}), kHalf) << groups << " groups";
    EXPECT_LE(worst_difference(x, group_norm(groups, 1e-5f), {40.0, 25.0, -128, 17}), kHalf) << groups;
  }
  // An affine per channel, and a ReLU after it.
  Node affine = group_norm(3, 1e-5f);
  affine.bias = true;
  EXPECT_LE(worst_difference(x, affine, {40.0, 20.0, 0, 0}, random_affine(12, 4)), kHalf);
  affine.relu = true;
  EXPECT_LE(worst_difference(x, affine, {40.0, 20.0, -128, -128}, random_affine(12, 5)), kHalf);
  EXPECT_LE(worst_difference(x, affine, {40.0, 20.0, 3, 7}, random_affine(12, 6)), kHalf);
  // A narrow range: the variance is a few levels, where epsilon counts.
  const ActTensor narrow = random_levels({3, 8, 3, 3}, -3, 2, 2);
  EXPECT_LE(worst_difference(narrow, group_norm(4, 1e-3f), {100.0, 30.0, 0, 0}), kHalf);
}

TEST(GroupNormLevels, TheLargestGroupAtTheWidestValuesIsExact) {
  // 2^22 values alternating between the two ends of the stored range, less a
  // zero point of 127: statistics of -255 and 0, the mean in between, each
  // value one deviation from it.
  ActTensor x({1, 1024, 64, 64});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = i % 2 ? 127 : -128;
  const ActTensor y = levels(x, group_norm(1, 0.0f), {10.0, 50.0, 127, 0});
  EXPECT_EQ(*std::min_element(y.data.begin(), y.data.end()), -50);
  EXPECT_EQ(*std::max_element(y.data.begin(), y.data.end()), 50);
  EXPECT_EQ(y.data[0], -50);
}

TEST(GroupNormLevels, ConstantGroupsAreTheOutputZeroPoint) {
  ActTensor x = random_levels({1, 4, 3, 3}, -128, 127, 3);
  std::fill(x.data.begin(), x.data.begin() + 18, int16_t{37});  // the first of two groups
  const ActTensor y = levels(x, group_norm(2, 0.0f), {10.0, 30.0, 2, -5});  // epsilon 0: 0 / 0 made 0
  EXPECT_TRUE(std::all_of(y.data.begin(), y.data.begin() + 18, [](int16_t v) { return v == -5; }));
  EXPECT_FALSE(std::all_of(y.data.begin() + 18, y.data.end(), [](int16_t v) { return v == -5; }));
}

// group_norm_level of every value of NHWC samples, the statistics summed here.
std::vector<int8_t> expected_levels(const std::vector<int8_t>& x, int64_t batch, int64_t C, int64_t groups,
                                    LayerNormLevels p, const std::vector<GroupNormChannel>& affine, double lowest) {
  const int64_t pixels = int64_t(x.size()) / batch / C, width = C / groups;
  p.channels = pixels * width;
  std::vector<int8_t> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t sum = 0, squares = 0;
      for (int64_t i = 0; i < pixels; ++i)
        for (int64_t c = g * width; c < (g + 1) * width; ++c) {
          const int64_t v = x[size_t((b * pixels + i) * C + c)] - p.input_zero_point;
          sum += v, squares += v * v;
        }
      const LayerNormPixel group = layer_norm_pixel(sum, squares, p);
      for (int64_t i = 0; i < pixels; ++i)
        for (int64_t c = g * width; c < (g + 1) * width; ++c)
          y[size_t((b * pixels + i) * C + c)] =
              group_norm_level(x[size_t((b * pixels + i) * C + c)], p, group,
                               group_norm_gain(group, affine[size_t(c)]), affine[size_t(c)].shift, lowest);
    }
  return y;
}

// The AVX-512 kernel (runtime/cpu/group_norm_vnni.cpp) gives group_norm_level's bits: channel counts around its
// vectors of 16 and 64, groups of one channel to all, a sample of 40,000 pixels (two runs of statistics, each
// at the most its int32 squares hold: zero point -128 and values of 127), zero points, constant groups without
// epsilon, an output scale whose levels leave int32 (the form that clamps in double first), without an affine,
// with one, and with one and a ReLU.
TEST(GroupNormLevels, TheAvx512KernelGivesTheseBits) {
#if defined(__x86_64__)
  if (!cpu::kernel_path_supported(cpu::KernelPath::Avx512Vnni)) GTEST_SKIP() << "this CPU lacks AVX-512 VNNI";
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> value(-128, 127);
  struct Layer {
    int64_t batch, pixels, channels, groups;
  };
  const LayerNormLevels bases[] = {{0, 10.0, 30.0, 0, 0, 1e-5}, {0, 3.0, 80.0, -128, 3, 0.0},
                                   {0, 100.0, 25.0, 5, -128, 0.5}, {0, 10.0, 1e9, 0, 9, 1e-5}};
  for (const Layer& s : {Layer{2, 9, 64, 32}, Layer{1, 5, 16, 16}, Layer{3, 4, 17, 17}, Layer{2, 3, 33, 3},
                         Layer{1, 7, 65, 5}, Layer{2, 2, 130, 65}, Layer{1, 3, 96, 1}, Layer{4, 1, 40, 4},
                         Layer{1, 40000, 1, 1}})
    for (const LayerNormLevels& p : bases)
      for (const int form : {0, 1, 2}) {  // no affine; an affine; an affine and a ReLU
        const int64_t width = s.channels / s.groups;
        std::vector<int8_t> x(size_t(s.batch * s.pixels * s.channels)), got(x.size());
        for (int8_t& v : x) v = static_cast<int8_t>(value(rng));
        if (s.pixels == 40000) std::fill(x.begin(), x.end(), int8_t{127}), x[5] = -128;
        if (s.groups > 1)  // the first group constant
          for (int64_t i = 0; i < s.pixels; ++i) std::fill_n(x.begin() + i * s.channels, width, int8_t{9});
        LayerNormLevels q = p;
        q.channels = s.pixels * width;
        const auto [g, b] = random_affine(s.channels, uint32_t(s.channels + form));
        const std::vector<GroupNormChannel> affine =
            form == 0 ? group_norm_channels(s.channels, {}, {}, p.output_scale)
                      : group_norm_channels(s.channels, g, b, p.output_scale);
        const double lowest = form == 2 ? p.output_zero_point : -128;
        std::vector<double> scales, shifts;
        for (const GroupNormChannel& c : affine) scales.push_back(c.scale), shifts.push_back(c.shift);
        shifts.resize(shifts.size() + cpu::vnni::kGroupNormShiftPadding);
        cpu::vnni::group_norm(x.data(), {s.batch, s.pixels, s.channels, s.groups}, q,
                              {scales.data(), shifts.data(), lowest}, got.data());
        EXPECT_EQ(got, expected_levels(x, s.batch, s.channels, s.groups, p, affine, lowest))
            << s.channels << " channels in " << s.groups << " groups, " << s.pixels << " pixels, output scale "
            << p.output_scale << ", zero points " << p.input_zero_point << " and " << p.output_zero_point << ", form "
            << form;
      }
#else
  GTEST_SKIP() << "not an x86-64 build: no AVX-512 kernel";
#endif
}

TEST(GroupNormFile, KeepsTheAffineAndRefusesWrongOnes) {
  const TempDir temp;
  OpModel m(9);
  m.group_norm(m.rescaled(m.input(6, 4, 4), 10.0f), 3, 1e-5f, 30.0f, true, true);
  const QuantizedModel model = m.finish();
  const int node = model.graph.find("group_norm_2");
  ASSERT_GE(node, 0);
  save_quantized_model(model, temp.path() + "/gn.octet");
  const QuantizedModel loaded = load_quantized_model(temp.path() + "/gn.octet");
  EXPECT_EQ(loaded.quant[node].norm_scale.data, model.quant[node].norm_scale.data);
  EXPECT_EQ(loaded.quant[node].norm_shift.data, model.quant[node].norm_shift.data);
  EXPECT_TRUE(loaded.graph.nodes[size_t(node)].bias && loaded.graph.nodes[size_t(node)].relu);

  QuantizedModel short_of_one = model;
  short_of_one.quant[node].norm_shift = FloatTensor({5}, 0.0f);
  EXPECT_THROW(save_quantized_model(short_of_one, temp.path() + "/bad.octet"), Error);
  EXPECT_FALSE(file_exists(temp.path() + "/bad.octet"));
  QuantizedModel not_finite = model;
  not_finite.quant[node].norm_scale.data[3] = std::numeric_limits<float>::infinity();
  try {
    not_finite.validate();
    FAIL() << "an infinite scale was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'group_norm_2'.norm_scale"), std::string::npos) << e.what();
  }
}

TEST(GroupNormAttributes, OutOfRangeAreRefused) {
  const std::vector<ActShape> in = {{12, 4, 4}};
  EXPECT_NO_THROW(op_def(Op::GroupNorm).shape(group_norm(4, 1e-5f), in));
  EXPECT_THROW(op_def(Op::GroupNorm).shape(group_norm(5, 1e-5f), in), Error);  // not a divisor of 12
  EXPECT_THROW(op_def(Op::GroupNorm).shape(group_norm(0, 1e-5f), in), Error);
  EXPECT_THROW(op_def(Op::GroupNorm).shape(group_norm(4, -1.0f), in), Error);
  EXPECT_THROW(op_def(Op::GroupNorm).shape(group_norm(4, NAN), in), Error);
  EXPECT_NO_THROW(op_def(Op::GroupNorm).shape(group_norm(1, 1e-5f), {{1024, 64, 64}}));  // 2^22 values a group
  EXPECT_THROW(op_def(Op::GroupNorm).shape(group_norm(1, 1e-5f), {{1025, 64, 64}}), Error);
}

}  // namespace
}  // namespace octet::ops
