// Choosing the CPU runtime's kernel path, and each path's kernels. (Every
// path is compared with the reference for every operator and whole networks
// by test_backend_ops; that comparison alone would pass with a path falling
// back to a portable kernel.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/cpu/cache_line_vector.h"
#include "runtime/cpu/cpu_engine.h"
#include "runtime/cpu/idle_threads.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels.h"
#include "tests/ops/op_cases.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

using cpu::KernelPath;

TEST(KernelPath, FastestSupportedPathIsTheDefault) {
  if (const char* forced = std::getenv("OCTET_CPU_KERNELS"); forced && *forced)
    GTEST_SKIP() << "OCTET_CPU_KERNELS=" << forced << " chooses the path";
  const KernelPath fastest = cpu::kernel_path_supported(KernelPath::Avx512Vnni) ? KernelPath::Avx512Vnni
                             : cpu::kernel_path_supported(KernelPath::Avx2)     ? KernelPath::Avx2
                                                                                : KernelPath::Reference;
  EXPECT_EQ(cpu::kernel_path(), fastest);
  EXPECT_TRUE(cpu::kernel_path_supported(KernelPath::Reference));
#if defined(__x86_64__)
  // octet's x86-64 baseline is x86-64-v3: an x86-64 CPU that runs it has AVX2.
  EXPECT_TRUE(cpu::kernel_path_supported(KernelPath::Avx2));
#endif
}

TEST(KernelPath, NamesRoundTripAndUnknownNamesFail) {
  EXPECT_EQ(cpu::kernel_path_from_name("reference"), KernelPath::Reference);
  EXPECT_STREQ(cpu::kernel_path_name(KernelPath::Avx2), "avx2");
  EXPECT_STREQ(cpu::kernel_path_name(KernelPath::Avx512Vnni), "avx512-vnni");
  for (KernelPath path : {KernelPath::Avx2, KernelPath::Avx512Vnni}) {
    const std::string name = cpu::kernel_path_name(path);
    if (cpu::kernel_path_supported(path)) {
      EXPECT_EQ(cpu::kernel_path_from_name(name), path);
    } else {
      EXPECT_THROW(cpu::kernel_path_from_name(name), Error);
    }
  }
  try {
    cpu::kernel_path_from_name("amx");
    FAIL() << "an unknown path name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'amx' is not a CPU kernel path (known: reference, avx2, avx512-vnni)"),
              std::string::npos)
        << e.what();
  }
}

// Runs `model` on every path this CPU has, expecting each node that
// `expected(node, path)` names a kernel for (others return "") to run on that
// kernel, and the same logits as the reference path. Returns the nodes checked.
template <typename Expected>
int expect_kernels_on_each_path(const QuantizedModel& model, Expected expected) {
  const std::vector<float> images = random_images(3, model.graph.shapes()[0], 7);
  const KernelPath before = cpu::kernel_path();
  Int32Tensor reference;
  int checked = 0;
  for (KernelPath path : {KernelPath::Reference, KernelPath::Avx2, KernelPath::Avx512Vnni}) {
    if (!cpu::kernel_path_supported(path)) continue;
    cpu::set_kernel_path(path);
    const CpuEngine engine(model);
    for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
      const std::string want = expected(model.graph.nodes[i], path);
      if (want.empty()) continue;
      EXPECT_EQ(std::string(engine.kernel_name(static_cast<int>(i))), want)
          << model.graph.nodes[i].name << " on " << cpu::kernel_path_name(path);
      ++checked;
    }
    const Int32Tensor logits = engine.run(images.data(), 3);
    if (path == KernelPath::Reference) reference = logits;
    EXPECT_EQ(logits.data, reference.data) << cpu::kernel_path_name(path);
  }
  cpu::set_kernel_path(before);
  return checked;
}

bool depthwise(const QuantizedModel& model, const Node& n) {
  return !n.inputs.empty() && is_depthwise(n, model.graph.shapes()[n.inputs[0]].c);
}

// Grouped convs (groups 3, and a depthwise conv with a channel multiplier of
// 2) and depthwise ones run on each path's own kernel, with the same logits.
TEST(KernelPath, GroupedAndDepthwiseConvsRunOnEachPathsKernel) {
  const QuantizedModel model = quantize_random(random_grouped_checkpoint(33), quick_quantize_options(), 16);
  const int checked = expect_kernels_on_each_path(model, [&](const Node& n, KernelPath path) -> std::string {
    if (n.op != Op::Conv2d || n.groups == 1) return "";
    const std::string suffix = path == KernelPath::Reference ? "" : std::string("-") + cpu::kernel_path_name(path);
    return (depthwise(model, n) ? "conv2d-depthwise" : "conv2d-grouped") + suffix;
  });
  EXPECT_GE(checked, 4);  // dw, gc, dw5, dw_m2 on the reference path at least
}

// Dilated dense and grouped convs run on the AVX2 kernels on that path; the
// AVX-512 VNNI kernel reads adjacent taps only, so that path leaves them to
// the AVX2 kernels too.
TEST(KernelPath, DilatedConvsRunOnTheAvx2Kernels) {
  const QuantizedModel model = quantize_random(random_dilated_checkpoint(41), quick_quantize_options(), 16);
  const int checked = expect_kernels_on_each_path(model, [&](const Node& n, KernelPath path) -> std::string {
    if (n.op != Op::Conv2d || n.dilation == 1 || depthwise(model, n)) return "";
    const std::string kernel = n.groups == 1 ? "conv2d" : "conv2d-grouped";
    if (path != KernelPath::Reference) return kernel + "-avx2";
    return n.groups == 1 ? kernel + "-reference" : kernel;
  });
  EXPECT_GE(checked, 2);  // "dil" and "gc" on the reference path at least
}

// Convs reading or making a wide (int16) activation run on the AVX2 kernel on
// both SIMD paths (the VNNI kernel reads bytes), with the reference's logits.
TEST(KernelPath, WideActivationConvsRunOnEachPathsDenseKernel) {
  const auto wide = std::find_if(op_cases().begin(), op_cases().end(),
                                 [](const OpCase& c) { return c.name.rfind("wide_stream_", 0) == 0; });
  ASSERT_NE(wide, op_cases().end());
  const QuantizedModel model = wide->model();
  const auto bits = [&](int node) { return model.quant[node].bits; };
  const int checked = expect_kernels_on_each_path(model, [&](const Node& n, KernelPath path) -> std::string {
    if (n.op != Op::Conv2d || (bits(static_cast<int>(&n - model.graph.nodes.data())) <= 8 && bits(n.inputs[0]) <= 8))
      return "";
    return std::string("conv2d-") + cpu::kernel_path_name(path);
  });
  EXPECT_GE(checked, 4);  // the stream's two writers and two readers, on the reference path at least
}

bool on_a_cache_line(const void* p) { return reinterpret_cast<uintptr_t>(p) % cpu::kCacheLine == 0; }

// The SIMD kernels' whole-vector loads of packed weights, and their stores of
// a value's channels, do not straddle two cache lines where the layouts start
// on one (cache_line_vector.h): each packed layout made, for layers of many
// sizes, and every value of a run of a random network. malloc's 16-byte
// alignment would land three in four elsewhere.
TEST(KernelPath, PackedWeightsAndValuesStartOnACacheLine) {
  for (const int in_c : {3, 16, 64, 130})
    for (const int out_c : {8, 24, 64})
      for (const int kernel : {1, 3}) {
        const std::vector<int8_t> weights(static_cast<size_t>(out_c * kernel * kernel * in_c), 1);
        for (const int bits : {8, 16}) {
          const cpu::PackedWeights packed(weights.data(), out_c, kernel, kernel, in_c, bits);
          for (const void* layout : {static_cast<const void*>(packed.blocked.data()),
                                     static_cast<const void*>(packed.blocked_wide.data()),
                                     static_cast<const void*>(packed.blocked_pairs.data()),
                                     static_cast<const void*>(packed.blocked_quads.data())}) {
            if (!layout) continue;  // a layout this CPU has no kernel for
            EXPECT_TRUE(on_a_cache_line(layout)) << in_c << " -> " << out_c << ", kernel " << kernel;
          }
        }
      }
  const QuantizedModel model = quantize_random(random_imagenet_ops_checkpoint(43), quick_quantize_options(), 16);
  const std::vector<float> images = random_images(3, model.graph.shapes()[0], 7);
  int values = 0;
  CpuEngine(model).run(images.data(), 3, [&](int node, const int8_t* value, int64_t) {
    if (model.float_outputs()[node]) return;  // handed to the hook as a rounded copy
    EXPECT_TRUE(on_a_cache_line(value)) << model.graph.nodes[node].name;
    ++values;
  });
  EXPECT_GE(values, 10);
}


// On the AVX-512 path, concats and activations run on the VBMI byte lookup
// where the CPU has VBMI (elsewhere the portable ones), on the AVX2 path on
// AVX2's, and muls on each SIMD path's kernel, with the same logits.
TEST(KernelPath, TableAndMulNodesRunOnTheSimdKernelsOfEachPath) {
  const QuantizedModel model = quantize_random(random_imagenet_ops_checkpoint(43), quick_quantize_options(), 16);
  int counted[3] = {};
  const int checked = expect_kernels_on_each_path(model, [&](const Node& n, KernelPath path) -> std::string {
    const bool avx512 = path == KernelPath::Avx512Vnni, vbmi = avx512 && cpu::cpu_has_avx512_vbmi();
    const int kind = n.op == Op::Concat ? 0 : n.op == Op::Activation ? 1 : n.op == Op::Mul ? 2 : -1;
    if (kind < 0) return "";
    ++counted[kind];
    const bool avx2 = path == KernelPath::Avx2;
    if (kind == 0) return vbmi ? "concat-avx512-vbmi" : avx2 ? "concat-avx2" : "concat";
    if (kind == 1) return vbmi ? "activation-avx512-vbmi" : avx2 ? "activation-avx2" : "activation-table";
    return avx512 ? "mul-avx512" : path == KernelPath::Avx2 ? "mul-avx2" : "mul";
  });
  EXPECT_GE(checked, 3);
  for (int c : counted) EXPECT_GE(c, 1);  // each kind of node at least once on the reference path
}

// Inputs with no negative value take AVX2's vpmaddubsw, whose int16 sum of
// two products saturates beyond 32767: with activations at most 127 and
// weights at least -128 no sum gets there. The extremes, against the portable
// kernel's accumulators: every input 127 (the largest a ReLU gives) against
// weights of -128 and 127, and random non-negative inputs, with channels that
// pad to the word and ones that do not; a negative input takes the int16 path.
TEST(KernelPath, Avx2UnsignedInputsNeverSaturate) {
  if (!cpu::kernel_path_supported(KernelPath::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2";
  for (const int in_c : {3, 8, 13}) {
    cpu::ConvGeometry g;
    g.batch = 2, g.in_h = 6, g.in_w = 5, g.in_c = in_c, g.out_h = 6, g.out_w = 5, g.out_c = 11;
    g.kernel = g.kernel_w = 3, g.padding = 1;
    std::vector<int8_t> weights(static_cast<size_t>(g.out_c * g.depth()));
    for (size_t k = 0; k < weights.size(); ++k) weights[k] = (k / g.depth()) % 2 ? int8_t{-128} : int8_t{127};
    const cpu::PackedWeights packed(weights.data(), g.out_c, g.kernel, g.kernel_w, g.in_c);
    const std::vector<int32_t> bias(static_cast<size_t>(g.out_c), 7);
    for (const int fill : {127, -1, 0}) {  // -1: random values in [0, 127]; 0: random ones with one negative
      std::vector<int8_t> input(static_cast<size_t>(g.batch * g.in_h * g.in_w * g.in_c), int8_t(fill));
      if (fill <= 0)
        for (size_t k = 0; k < input.size(); ++k) input[k] = static_cast<int8_t>((k * 37 + 11) % 128);
      if (fill == 0) input[input.size() / 2] = -5;
      std::vector<int32_t> expected(static_cast<size_t>(g.rows() * g.out_c)), got(expected.size());
      cpu::conv2d_int32(g, input.data(), packed, bias.data(), expected.data(), KernelPath::Reference);
      cpu::conv2d_int32(g, input.data(), packed, bias.data(), got.data(), KernelPath::Avx2);
      EXPECT_EQ(got, expected) << in_c << " channels, fill " << fill;
      if (fill == 127) {
        EXPECT_EQ(expected[(g.out_w + 1) * g.out_c + 1], 7 - 128 * 127 * 9 * in_c);  // an inner pixel
      }
    }
  }
}

// Where idle threads sleep, the kernels share only large layers with them
// (R20 at batch 1 ran 7x slower with the thresholds for spinning threads).
TEST(IdleThreads, OnlyAPassiveWaitPolicyMakesThemSleep) {
  for (const char* passive : {"passive", "PASSIVE", "Passive"})
    EXPECT_FALSE(cpu::idle_threads_spin(passive)) << passive;
  for (const char* spinning : {"active", "ACTIVE", ""}) EXPECT_TRUE(cpu::idle_threads_spin(spinning)) << spinning;
  EXPECT_TRUE(cpu::idle_threads_spin(nullptr));
  // This process's policy, which the kernels' thresholds follow.
  const bool spin = cpu::idle_threads_spin(std::getenv("OMP_WAIT_POLICY"));
  EXPECT_EQ(cpu::idle_threads_spin(), spin);
  EXPECT_EQ(cpu::min_parallel_work(1, 2), spin ? 1 : 2);
}

}  // namespace
}  // namespace octet
