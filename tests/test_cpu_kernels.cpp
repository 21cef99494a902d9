// The fast CPU kernel paths (AVX-512 VNNI) against the portable reference
// path, per layer over many shapes and for whole networks: zero tolerance.
// Skipped on CPUs without the fast path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>

#include "common/error.h"
#include "data/dataset.h"
#include "quant/pipeline.h"
#include "runtime/cpu/engine.h"
#include "runtime/cpu/kernels.h"
#include "tests/random_model.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using cpu::KernelPath;

// Runs `f` with `path` selected, then restores the path that was in use.
template <typename F>
void with_path(KernelPath path, F f) {
  const KernelPath before = cpu::kernel_path();
  cpu::set_kernel_path(path);
  f();
  cpu::set_kernel_path(before);
}

#define REQUIRE_FAST_PATH()                                                \
  if (!cpu::kernel_path_supported(KernelPath::Avx512Vnni))                \
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI: only the reference path runs here"

struct ConvCase {
  int64_t batch;
  int in_h, in_w, in_c, out_c, kernel, stride, padding;
  bool residual, relu;
  bool extreme_requant;  // multipliers and shifts over their whole range
};

std::string case_name(const ConvCase& c) {
  std::ostringstream s;
  s << "b" << c.batch << "_" << c.in_h << "x" << c.in_w << "x" << c.in_c << "_o" << c.out_c << "_k" << c.kernel << "s"
    << c.stride << "p" << c.padding << (c.residual ? "_res" : "") << (c.relu ? "_relu" : "")
    << (c.extreme_requant ? "_extreme" : "");
  return s.str();
}

// Hand-picked shapes (first layers, ResNet and LeNet layers, linears as 1x1
// convs over 1x1 images), then a deterministic random sample of the rest.
std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases = {
      {4, 32, 32, 3, 16, 3, 1, 1, false, true, false},      // ResNet first layer, K = 27
      {3, 28, 28, 1, 6, 5, 1, 2, false, true, false},       // LeNet on Fashion-MNIST, K = 25
      {2, 32, 32, 3, 6, 5, 1, 0, false, true, false},       // LeNet on CIFAR-10, K = 75
      {2, 16, 16, 16, 16, 3, 1, 1, true, true, false},      // ResNet block with residual
      {2, 16, 16, 16, 32, 3, 2, 1, false, true, false},     // downsampling
      {2, 8, 8, 64, 64, 3, 1, 1, true, true, false},        // J = 4 register blocks
      {2, 8, 8, 32, 64, 1, 2, 0, false, false, false},      // 1x1 stride-2 projection
      {2, 4, 4, 64, 48, 3, 1, 1, false, true, false},       // 3 blocks
      {64, 1, 1, 400, 120, 1, 1, 0, false, true, false},    // linear 400 -> 120
      {33, 1, 1, 84, 10, 1, 1, 0, false, false, false},     // linear, odd batch
      {1, 1, 1, 7, 5, 1, 1, 0, false, false, false},        // tiny
      {5, 9, 7, 13, 17, 3, 2, 2, true, false, false},       // odd everything
      {3, 11, 11, 5, 21, 5, 2, 2, false, true, false},
      {2, 12, 12, 24, 80, 1, 1, 0, true, true, false},      // 1x1 direct, 5 blocks
      {2, 10, 10, 16, 33, 3, 1, 1, true, true, true},       // requantization at its extremes
      {1, 6, 6, 9, 70, 3, 1, 0, false, false, true},
  };
  std::mt19937 rng(2024);
  auto pick = [&](std::initializer_list<int> values) {
    return *(values.begin() + std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng));
  };
  while (cases.size() < 72) {
    ConvCase c;
    c.kernel = pick({1, 3, 5});
    c.stride = pick({1, 2});
    c.padding = pick({0, 1, 2});
    c.in_c = pick({1, 3, 4, 5, 8, 15, 16, 17, 32, 33, 64});
    c.out_c = pick({1, 3, 6, 10, 16, 17, 31, 32, 48, 64, 65});
    c.in_h = pick({1, 2, 5, 8, 13, 16});
    c.in_w = pick({1, 3, 5, 8, 13, 16});
    c.batch = pick({1, 2, 3, 7, 16, 64});
    c.residual = pick({0, 1});
    c.relu = pick({0, 1});
    c.extreme_requant = pick({0, 0, 0, 1});
    if (c.in_h + 2 * c.padding < c.kernel || c.in_w + 2 * c.padding < c.kernel) continue;
    if (c.batch * c.in_h * c.in_w > 4096) c.batch = 1;  // keeps the reference path quick
    cases.push_back(c);
  }
  return cases;
}

struct ConvData {
  cpu::ConvGeometry g;
  std::vector<int8_t> input, weight, skip;
  std::vector<int32_t> bias, multiplier, shift, skip_multiplier;
};

ConvData make_conv(const ConvCase& c, uint64_t seed) {
  ConvData d;
  d.g.batch = c.batch;
  d.g.in_h = c.in_h, d.g.in_w = c.in_w, d.g.in_c = c.in_c;
  d.g.kernel = c.kernel, d.g.stride = c.stride, d.g.padding = c.padding;
  d.g.out_h = (c.in_h + 2 * c.padding - c.kernel) / c.stride + 1;
  d.g.out_w = (c.in_w + 2 * c.padding - c.kernel) / c.stride + 1;
  d.g.out_c = c.out_c;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  d.input.resize(static_cast<size_t>(c.batch * c.in_h * c.in_w * c.in_c));
  for (int8_t& v : d.input) v = static_cast<int8_t>(byte(rng));
  d.weight.resize(static_cast<size_t>(c.out_c * d.g.depth()));
  for (int8_t& v : d.weight) v = static_cast<int8_t>(byte(rng));
  if (c.residual) {
    d.skip.resize(static_cast<size_t>(d.g.rows() * c.out_c));
    for (int8_t& v : d.skip) v = static_cast<int8_t>(byte(rng));
  }
  // Scales that spread the outputs over the int8 range: |acc| is about
  // 74^2 sqrt(K) for uniform bytes, mapped to about 50.
  const double typical = 5476.0 * std::sqrt(static_cast<double>(d.g.depth())) / 50.0;
  std::uniform_real_distribution<double> jitter(0.5, 2.0);
  std::uniform_int_distribution<int64_t> any_multiplier(0, (int64_t{1} << 31) - 1);
  std::uniform_int_distribution<int> any_shift(1, 62);
  std::uniform_int_distribution<int32_t> bias(-20000, 20000);
  for (int o = 0; o < c.out_c; ++o) {
    d.bias.push_back(bias(rng));
    int32_t shift, multiplier;
    if (c.extreme_requant) {
      shift = any_shift(rng);
      multiplier = static_cast<int32_t>(any_multiplier(rng));
    } else {
      const double m = jitter(rng) / typical;
      shift = static_cast<int32_t>(std::floor(30.0 - std::log2(m)));
      multiplier = static_cast<int32_t>(std::llround(std::ldexp(m, shift)));
    }
    d.shift.push_back(shift);
    d.multiplier.push_back(multiplier);
    const int64_t skip_bound = std::min<int64_t>((int64_t{1} << 31) - 1, int64_t{1} << std::min(shift, 40));
    d.skip_multiplier.push_back(
        static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, skip_bound)(rng)));
  }
  return d;
}

class ConvKernels : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvKernels, FastPathMatchesReferenceBitForBit) {
  REQUIRE_FAST_PATH();
  const ConvCase c = GetParam();
  const ConvData d = make_conv(c, 7 + static_cast<uint64_t>(c.out_c) * 131 + static_cast<uint64_t>(c.in_c));
  const cpu::PackedWeights w(d.weight.data(), c.out_c, c.kernel, c.in_c);
  cpu::Epilogue e;
  e.bias = d.bias.data();
  e.multiplier = d.multiplier.data();
  e.shift = d.shift.data();
  e.relu = c.relu;
  if (c.residual) {
    e.skip = d.skip.data();
    e.skip_multiplier = d.skip_multiplier.data();
  }
  const size_t outputs = static_cast<size_t>(d.g.rows() * c.out_c);
  std::vector<int8_t> reference(outputs, 1), fast(outputs, 2);
  with_path(KernelPath::Reference, [&] { cpu::conv2d(d.g, d.input.data(), w, e, reference.data()); });
  with_path(KernelPath::Avx512Vnni, [&] { cpu::conv2d(d.g, d.input.data(), w, e, fast.data()); });
  int distinct = 0;
  for (size_t i = 0; i < outputs; ++i) {
    ASSERT_EQ(int(fast[i]), int(reference[i])) << "output " << i << " (row " << i / c.out_c << ", channel "
                                               << i % c.out_c << ")";
    distinct += i > 0 && reference[i] != reference[i - 1];
  }
  if (!c.extreme_requant && outputs > 64) {
    EXPECT_GT(distinct, 0) << "outputs all equal: the case tests nothing";
  }

  std::vector<int32_t> reference32(outputs, 1), fast32(outputs, 2);
  with_path(KernelPath::Reference,
            [&] { cpu::conv2d_int32(d.g, d.input.data(), w, d.bias.data(), reference32.data()); });
  with_path(KernelPath::Avx512Vnni, [&] { cpu::conv2d_int32(d.g, d.input.data(), w, d.bias.data(), fast32.data()); });
  for (size_t i = 0; i < outputs; ++i) ASSERT_EQ(fast32[i], reference32[i]) << "int32 output " << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvKernels, ::testing::ValuesIn(conv_cases()),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return std::to_string(info.index) + "_" + case_name(info.param);
                         });

TEST(KernelPath, FastestSupportedPathIsTheDefault) {
  if (const char* forced = std::getenv("OCTET_CPU_KERNELS"); forced && *forced)
    GTEST_SKIP() << "OCTET_CPU_KERNELS=" << forced << " chooses the path";
  EXPECT_EQ(cpu::kernel_path(), cpu::kernel_path_supported(KernelPath::Avx512Vnni) ? KernelPath::Avx512Vnni
                                                                                   : KernelPath::Reference);
  EXPECT_TRUE(cpu::kernel_path_supported(KernelPath::Reference));
}

TEST(KernelPath, NamesRoundTripAndUnknownNamesFail) {
  EXPECT_EQ(cpu::kernel_path_from_name("reference"), KernelPath::Reference);
  EXPECT_STREQ(cpu::kernel_path_name(KernelPath::Avx512Vnni), "avx512-vnni");
  if (cpu::kernel_path_supported(KernelPath::Avx512Vnni)) {
    EXPECT_EQ(cpu::kernel_path_from_name("avx512-vnni"), KernelPath::Avx512Vnni);
  } else {
    EXPECT_THROW(cpu::kernel_path_from_name("avx512-vnni"), Error);
  }
  try {
    cpu::kernel_path_from_name("avx2");
    FAIL() << "an unknown path name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'avx2' is not a CPU kernel path"), std::string::npos) << e.what();
  }
}

// Every node's output and the logits of a whole network on both paths.
void expect_same_network_outputs(const QuantizedModel& model, const std::vector<float>& images, int64_t batch) {
  const CpuEngine engine(model);
  std::vector<std::vector<int8_t>> reference_values(model.graph.nodes.size());
  Int32Tensor reference_logits, fast_logits;
  with_path(KernelPath::Reference, [&] {
    reference_logits = engine.run(images.data(), batch, [&](int node, const int8_t* values, int64_t count) {
      reference_values[node].assign(values, values + count);
    });
  });
  int compared = 0;
  with_path(KernelPath::Avx512Vnni, [&] {
    fast_logits = engine.run(images.data(), batch, [&](int node, const int8_t* values, int64_t count) {
      ASSERT_EQ(static_cast<size_t>(count), reference_values[node].size());
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(int(values[i]), int(reference_values[node][i]))
            << "node " << model.graph.nodes[node].name << " value " << i;
      ++compared;
    });
  });
  EXPECT_EQ(compared, static_cast<int>(model.graph.nodes.size()) - 1);
  ASSERT_EQ(fast_logits.shape, reference_logits.shape);
  EXPECT_EQ(fast_logits.data, reference_logits.data);
}

QuantizeOptions max_nearest() {
  QuantizeOptions o;
  o.method = AmaxMethod::Max;
  o.weight_rounding = "nearest";
  return o;
}

TEST(CpuEnginePaths, ZooLeNetOnFashionMnistIsIdentical) {
  REQUIRE_FAST_PATH();
  const Checkpoint checkpoint = load_checkpoint(zoo_checkpoint("lenet5_fmnist"));
  const QuantizedModel model = quantize_checkpoint(checkpoint, fashion_mnist_dir(), max_nearest(), 256).model;
  const Dataset test = load_dataset("fashion-mnist", fashion_mnist_dir(), Split::Test);
  const int64_t batch = 64;
  expect_same_network_outputs(model, normalized_images(test, checkpoint.mean, checkpoint.std, 0, batch), batch);
}

TEST(CpuEnginePaths, RandomResNet20IsIdentical) {
  REQUIRE_FAST_PATH();
  const QuantizedModel model = quantize_random(random_checkpoint("resnet20", ModelOptions{}, 5), max_nearest());
  const int64_t batch = 6;
  expect_same_network_outputs(model, random_images(batch, {3, 32, 32}, 9), batch);
}

TEST(CpuEnginePaths, RandomResNet18IsIdentical) {
  REQUIRE_FAST_PATH();
  const QuantizedModel model = quantize_random(random_checkpoint("resnet18", ModelOptions{}, 6), max_nearest(), 16);
  const int64_t batch = 2;
  expect_same_network_outputs(model, random_images(batch, {3, 32, 32}, 10), batch);
}

}  // namespace
}  // namespace octet
