// The CUDA runtime against the CPU integer runtime, zero tolerance, on both
// backends: every op in small models on random int8 data with random
// requantization parameters over many shapes, then whole networks (random
// ResNet-18 and ResNet-20, the zoo checkpoints on their test sets), every
// node's int8 output and the int32 logits. Without a GPU these tests skip.
// The device memory layout itself (padding, packed weights, the buffer-reusing
// arena) is also checked on the host, where it runs without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <thread>

#include "common/error.h"
#include "data/dataset.h"
#include "quant/pipeline.h"
#include "runtime/cpu/engine.h"
#include "runtime/cuda/cuda_engine.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/requantize.h"
#include "tests/random_model.h"
#include "tests/test_util.h"

namespace octet {

// How gtest names a backend parameter (found by argument-dependent lookup).
static void PrintTo(CudaBackend backend, std::ostream* out) {
  *out << cuda_backend_name(backend);
}

namespace {

#define SKIP_WITHOUT_CUDA_DEVICE()                                                              \
  do {                                                                                          \
    std::string why_not;                                                                        \
    if (!CudaEngine::device_available(&why_not)) GTEST_SKIP() << "no CUDA device: " << why_not; \
  } while (0)

std::string backend_label(CudaBackend backend) { return std::string(cuda_backend_name(backend)).substr(5); }
const auto kBackends = ::testing::Values(CudaBackend::Imma, CudaBackend::Dp4a, CudaBackend::CublasLt);

// "" when equal; otherwise how many values differ and where the first one is
// (NHWC position in a tensor of per-sample shape `shape`).
template <typename T>
std::string difference(const std::vector<T>& expected, const std::vector<T>& actual, const ActShape& shape) {
  if (expected.size() != actual.size())
    return "sizes differ: " + std::to_string(expected.size()) + " expected, " + std::to_string(actual.size()) + " got";
  int64_t count = 0, first = -1;
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i]) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++count;
    }
  if (count == 0) return "";
  const int64_t c = first % shape.c, x = first / shape.c % shape.w, y = first / (int64_t(shape.c) * shape.w) % shape.h;
  return std::to_string(count) + " of " + std::to_string(expected.size()) + " values differ, the first at [n " +
         std::to_string(first / shape.numel()) + "][y " + std::to_string(y) + "][x " + std::to_string(x) + "][c " +
         std::to_string(c) + "]: expected " + std::to_string(int64_t(expected[first])) + ", got " +
         std::to_string(int64_t(actual[first]));
}

// Runs `model` on `images` on the CPU (recording every node) and on the GPU
// with every node retained; expects identical int8 outputs at every node and
// identical logits. Then checks the logits again with the buffer-reusing
// memory plan, run three times: kernels launched directly, then captured into
// a CUDA graph, then replayed from it.
void expect_same_as_cpu(const QuantizedModel& model, CudaBackend backend, const std::vector<float>& images,
                        int64_t batch) {
  const Graph& g = model.graph;
  const std::vector<ActShape> shapes = g.shapes();
  const CpuEngine cpu(model);
  std::vector<std::vector<int8_t>> expected(g.nodes.size());
  const Int32Tensor expected_logits = cpu.run(
      images.data(), batch, [&](int node, const int8_t* v, int64_t count) { expected[node].assign(v, v + count); });
  const ActShape logits_shape{model.num_classes(), 1, 1};

  CudaEngine gpu(model, backend);
  gpu.retain_node_outputs(true);
  const Int32Tensor logits = gpu.run(images.data(), batch);
  for (int i = 0; i < model.output(); ++i) {
    const std::string diff = difference(expected[i], gpu.node_output(i), shapes[i]);
    ASSERT_EQ(diff, "") << "node " << i << " '" << g.nodes[i].name << "' (" << op_name(g.nodes[i].op) << ", "
                        << to_string(shapes[i]) << ") at batch " << batch << " on " << gpu.backend();
  }
  ASSERT_EQ(difference(expected_logits.data, logits.data, logits_shape), "") << "logits on " << gpu.backend();

  gpu.retain_node_outputs(false);
  for (int run = 0; run < 3; ++run) {
    const Int32Tensor reused = gpu.run(images.data(), batch);
    ASSERT_EQ(difference(expected_logits.data, reused.data, logits_shape), "")
        << "logits with buffer reuse, run " << run << " on " << gpu.backend();
  }
}

// ---------------------------------------------------------------------------
// Small models around one op, with random int8 weights and random
// requantization parameters. Every activation has scale 1, so images of
// integer-valued floats in [-128, 127] are their own int8 values.

class OpModel {
 public:
  explicit OpModel(uint64_t seed) : rng_(seed) {}

  int input(int c, int h, int w, float scale = 1.0f) {
    scale_ = scale;
    Node n;
    n.op = Op::Input;
    n.channels = c, n.height = h, n.width = w;
    return push(n, activation());
  }
  // A conv (with a fused residual when skip >= 0).
  int conv(int x, int out_c, int kernel, int stride, int padding, bool relu, int skip = -1) {
    Node n;
    n.op = Op::Conv2d;
    n.inputs = {x};
    if (skip >= 0) n.inputs.push_back(skip);
    n.channels = out_c, n.kernel = kernel, n.stride = stride, n.padding = padding;
    n.bias = true, n.relu = relu;
    const int64_t in_c = shape(x).c;
    return push(n, weighted({out_c, in_c, kernel, kernel}, skip >= 0, false));
  }
  int linear(int x, int out_c, bool relu, int skip = -1) {
    Node n;
    n.op = Op::Linear;
    n.inputs = {x};
    if (skip >= 0) n.inputs.push_back(skip);
    n.channels = out_c, n.bias = true, n.relu = relu;
    return push(n, weighted({out_c, shape(x).numel()}, skip >= 0, false));
  }
  int max_pool(int x, int kernel, int stride) { return pool(Op::MaxPool2d, x, kernel, stride); }
  int avg_pool(int x, int kernel, int stride) {
    NodeQuant q = activation();
    set_pool_requant(q, double(kernel) * kernel);
    return push(pool_node(Op::AvgPool2d, x, kernel, stride), q);
  }
  int global_avg_pool(int x) {
    Node n;
    n.op = Op::GlobalAvgPool;
    n.inputs = {x};
    NodeQuant q = activation();
    set_pool_requant(q, double(shape(x).h) * shape(x).w);
    return push(n, q);
  }
  int add(int a, int b, bool relu) {
    Node n;
    n.op = Op::Add;
    n.inputs = {a, b};
    n.relu = relu;
    NodeQuant q = activation();
    const int32_t shift = uniform_int(26, 30);
    q.multiplier =
        Int32Tensor({2}, std::vector<int32_t>{fixed(uniform(0.1, 1.5), shift), fixed(uniform(0.1, 1.5), shift)});
    q.shift = Int32Tensor({1}, std::vector<int32_t>{shift});
    return push(n, q);
  }
  int shortcut_a(int x, int pad) {
    Node n;
    n.op = Op::ShortcutA;
    n.inputs = {x};
    n.channels = pad;
    return push(n, activation());
  }
  int relu(int x) {
    Node n;
    n.op = Op::ReLU;
    n.inputs = {x};
    return push(n, activation());
  }
  int flatten(int x) {
    Node n;
    n.op = Op::Flatten;
    n.inputs = {x};
    return push(n, activation());
  }

  // Ends with flatten (when needed) and the output linear.
  QuantizedModel finish(int classes = 4) {
    int x = static_cast<int>(graph_.nodes.size()) - 1;
    if (shape(x).h * shape(x).w > 1) x = flatten(x);
    Node n;
    n.op = Op::Linear;
    n.inputs = {x};
    n.channels = classes, n.bias = true;
    push(n, weighted({classes, shape(x).numel()}, false, true));
    QuantizedModel m;
    m.graph = graph_;
    m.quant = quant_;
    m.model = "op-test";
    m.source = {"op-test", std::string(64, '0'), std::string(64, '0')};  // no checkpoint behind it
    m.dataset = "random";
    for (int c = 0; c < classes; ++c) m.classes.push_back("class" + std::to_string(c));
    m.mean.assign(graph_.nodes[0].channels, 0.0f);
    m.std.assign(graph_.nodes[0].channels, 1.0f);
    m.validate("op test model");
    return m;
  }

 private:
  int push(Node n, NodeQuant q) {
    n.name = std::string(op_name(n.op)) + "_" + std::to_string(graph_.nodes.size());
    graph_.nodes.push_back(n);
    quant_.push_back(std::move(q));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }
  ActShape shape(int node) const { return graph_.shapes()[node]; }
  NodeQuant activation() const {
    NodeQuant q;
    q.scale = scale_;
    q.amax = 127.0f / scale_;
    q.method = "test";
    return q;
  }
  Node pool_node(Op op, int x, int kernel, int stride) const {
    Node n;
    n.op = op;
    n.inputs = {x};
    n.kernel = kernel, n.stride = stride;
    return n;
  }
  int pool(Op op, int x, int kernel, int stride) { return push(pool_node(op, x, kernel, stride), activation()); }

  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  int32_t uniform_int(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng_); }
  // gain * 2^shift as a valid multiplier (clamped below 2^31).
  static int32_t fixed(double gain, int32_t shift) {
    return static_cast<int32_t>(std::min(std::round(std::ldexp(gain, shift)), 2147483647.0));
  }
  // A window of `window` int8 values sums to about +-74 sqrt(window); map that to about +-64.
  void set_pool_requant(NodeQuant& q, double window) {
    const int32_t shift = uniform_int(20, 30);
    q.multiplier =
        Int32Tensor({1}, std::vector<int32_t>{fixed(uniform(0.5, 2.0) * 64.0 / (74.0 * std::sqrt(window)), shift)});
    q.shift = Int32Tensor({1}, std::vector<int32_t>{shift});
  }
  // Random int8 weights and int32 biases; per channel a random shift and
  // gains that spread the outputs over the int8 range (a dot product of K
  // random int8 pairs has a standard deviation near 74^2 sqrt(K)), a few
  // channels saturating.
  NodeQuant weighted(const Shape& weight_shape, bool residual, bool is_output) {
    NodeQuant q = activation();
    const int64_t out_c = weight_shape[0];
    const double depth = double(shape_numel(weight_shape) / out_c);
    const double spread = 74.0 * 74.0 * std::sqrt(depth);
    q.weight = Int8Tensor(weight_shape);
    for (int8_t& w : q.weight.data) w = static_cast<int8_t>(uniform_int(-128, 127));
    q.weight_scale = FloatTensor({out_c}, 1.0f);
    q.bias = Int32Tensor({out_c});
    for (int32_t& b : q.bias.data) b = static_cast<int32_t>(std::round(uniform(-spread, spread)));
    if (is_output) {
      q.scale = 0;
      q.logit_scale = FloatTensor({out_c}, 1.0f);
      return q;
    }
    q.multiplier = Int32Tensor({out_c});
    q.shift = Int32Tensor({out_c});
    if (residual) q.skip_multiplier = Int32Tensor({out_c});
    for (int64_t o = 0; o < out_c; ++o) {
      q.shift.data[o] = uniform_int(20, 30);
      q.multiplier.data[o] = fixed(uniform(0.2, 2.0) * 64.0 / spread, q.shift.data[o]);
      if (residual) q.skip_multiplier.data[o] = fixed(uniform(0.0, 1.0), q.shift.data[o]);
    }
    return q;
  }

  Graph graph_;
  std::vector<NodeQuant> quant_;
  std::mt19937_64 rng_;
  float scale_ = 1.0f;
};

std::vector<float> int8_images(int64_t count, const ActShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-128, 127);
  std::vector<float> out(static_cast<size_t>(count * s.numel()));
  for (float& v : out) v = static_cast<float>(value(rng));
  return out;
}

// Floats for the input quantization: normal values, exact half-way cases of
// scale 4, out-of-range values, infinities and NaN.
std::vector<float> float_images(int64_t count, const ActShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::uniform_int_distribution<int> kind(0, 9), half_steps(-300, 300);
  std::vector<float> out(static_cast<size_t>(count * s.numel()));
  for (float& v : out) {
    switch (kind(rng)) {
      case 0: v = (static_cast<float>(half_steps(rng)) + 0.5f) / 4.0f; break;
      case 1: v = normal(rng) * 100.0f; break;
      case 2: v = std::numeric_limits<float>::infinity() * (normal(rng) < 0 ? -1.0f : 1.0f); break;
      case 3: v = std::numeric_limits<float>::quiet_NaN(); break;
      default: v = normal(rng);
    }
  }
  return out;
}

struct OpCase {
  std::string name;  // letters, digits and underscores (a gtest name)
  int64_t batch;
  std::function<QuantizedModel()> model;
  bool float_input = false;  // float_images instead of int8_images
};

void PrintTo(const OpCase& op, std::ostream* out) { *out << op.name; }

std::string shape_name(int64_t batch, int c, int h, int w) {
  return "b" + std::to_string(batch) + "_" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  uint64_t seed = 100;

  // Convolutions: odd channel counts, K not a multiple of 4 (27, 25, 75,
  // 150, ...), kernel 1/3/5, stride 1/2, padding 0/1/2, batch 1..512.
  struct Conv {
    int64_t batch;
    int c, h, w, out_c, kernel, stride, padding;
    bool relu, residual;
  };
  const Conv convs[] = {
      {1, 3, 8, 8, 16, 3, 1, 1, true, false},    {2, 1, 28, 28, 6, 5, 1, 2, true, false},
      {3, 3, 32, 32, 6, 5, 1, 0, true, false},   {4, 6, 14, 14, 16, 5, 1, 0, true, false},
      {5, 5, 9, 9, 7, 3, 2, 1, false, true},     {7, 16, 16, 16, 16, 3, 1, 1, true, true},
      {2, 16, 16, 16, 32, 3, 2, 1, true, false}, {3, 16, 15, 15, 32, 1, 2, 0, false, false},
      {2, 13, 7, 7, 130, 1, 1, 0, true, true},   {1, 7, 11, 11, 65, 5, 2, 2, true, false},
      {2, 64, 8, 8, 64, 3, 1, 1, true, true},    {1, 3, 5, 5, 3, 5, 1, 0, false, false},
      {512, 3, 8, 8, 10, 3, 1, 1, true, false},  {64, 33, 6, 6, 17, 3, 1, 2, false, true},
      {2, 2, 6, 7, 5, 3, 2, 0, true, false},     {256, 16, 8, 8, 33, 3, 2, 1, true, false},
      {9, 4, 10, 10, 24, 1, 1, 1, true, false},  {128, 32, 8, 8, 64, 3, 2, 1, false, true},
  };
  for (const Conv& v : convs) {
    const uint64_t s = seed++;
    cases.push_back({"conv_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
                         std::to_string(v.kernel) + "s" + std::to_string(v.stride) + "p" + std::to_string(v.padding) +
                         (v.relu ? "_relu" : "") + (v.residual ? "_residual" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       const int skip = v.residual ? m.conv(x, v.out_c, v.kernel, v.stride, v.padding, false) : -1;
                       m.conv(x, v.out_c, v.kernel, v.stride, v.padding, v.relu, skip);
                       return m.finish();
                     }});
  }

  // Linear layers: on flat inputs and on flattened images with padded
  // channels (3 of 4, 1 of 4), with and without a residual.
  struct Linear {
    int64_t batch;
    int c, h, w, out_c;
    bool relu, residual;
  };
  const Linear linears[] = {
      {1, 5, 1, 1, 7, true, false},       {3, 16, 5, 5, 120, true, false}, {17, 3, 4, 4, 30, false, true},
      {512, 512, 1, 1, 10, false, false}, {64, 84, 1, 1, 84, true, true},  {2, 1, 28, 28, 33, true, false},
  };
  for (const Linear& v : linears) {
    const uint64_t s = seed++;
    cases.push_back({"linear_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) +
                         (v.relu ? "_relu" : "") + (v.residual ? "_residual" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       int x = m.input(v.c, v.h, v.w);
                       if (v.h * v.w > 1) x = m.flatten(x);
                       const int skip = v.residual ? m.linear(x, v.out_c, false) : -1;
                       m.linear(x, v.out_c, v.relu, skip);
                       return m.finish(10);
                     }});
  }

  // Pools.
  struct Pool {
    int64_t batch;
    int c, h, w, kernel, stride;
  };
  const Pool pools[] = {{2, 6, 28, 28, 2, 2}, {3, 5, 9, 9, 3, 2}, {512, 16, 10, 10, 2, 2}, {1, 3, 7, 6, 3, 1}};
  for (const Pool& v : pools) {
    const std::string suffix =
        shape_name(v.batch, v.c, v.h, v.w) + "_k" + std::to_string(v.kernel) + "s" + std::to_string(v.stride);
    const uint64_t s = seed++;
    cases.push_back({"max_pool_" + suffix, v.batch, [v, s] {
                       OpModel m(s);
                       m.max_pool(m.input(v.c, v.h, v.w), v.kernel, v.stride);
                       return m.finish();
                     }});
    cases.push_back({"avg_pool_" + suffix, v.batch, [v, s] {
                       OpModel m(s);
                       m.avg_pool(m.input(v.c, v.h, v.w), v.kernel, v.stride);
                       return m.finish();
                     }});
  }
  struct Plane {
    int64_t batch;
    int c, h, w;
  };
  for (const Plane& v : {Plane{1, 16, 8, 8}, Plane{7, 13, 4, 4}, Plane{512, 64, 8, 8}, Plane{2, 3, 1, 1}}) {
    const uint64_t s = seed++;
    cases.push_back({"global_avg_pool_" + shape_name(v.batch, v.c, v.h, v.w), v.batch, [v, s] {
                       OpModel m(s);
                       m.global_avg_pool(m.input(v.c, v.h, v.w));
                       return m.finish();
                     }});
  }

  // Add (of the input and a 1x1 conv of it), ReLU, shortcut A.
  struct Add {
    int64_t batch;
    int c, h, w;
    bool relu;
  };
  for (const Add& v : {Add{1, 5, 6, 6, true}, Add{33, 16, 8, 8, false}, Add{512, 3, 4, 4, true}}) {
    const uint64_t s = seed++;
    cases.push_back({"add_" + shape_name(v.batch, v.c, v.h, v.w) + (v.relu ? "_relu" : ""), v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       m.add(x, m.conv(x, v.c, 1, 1, 0, false), v.relu);
                       return m.finish();
                     }});
  }
  for (const Plane& v : {Plane{1, 3, 5, 5}, Plane{100, 7, 3, 3}}) {
    const uint64_t s = seed++;
    cases.push_back({"relu_" + shape_name(v.batch, v.c, v.h, v.w), v.batch, [v, s] {
                       OpModel m(s);
                       m.relu(m.input(v.c, v.h, v.w));
                       return m.finish();
                     }});
  }
  struct Shortcut {
    int64_t batch;
    int c, h, w, pad;
  };
  for (const Shortcut& v :
       {Shortcut{1, 16, 32, 32, 8}, Shortcut{3, 3, 7, 7, 1}, Shortcut{512, 5, 5, 6, 2}, Shortcut{2, 32, 16, 16, 16}}) {
    const uint64_t s = seed++;
    cases.push_back(
        {"shortcut_a_" + shape_name(v.batch, v.c, v.h, v.w) + "_pad" + std::to_string(v.pad), v.batch, [v, s] {
           OpModel m(s);
           m.shortcut_a(m.input(v.c, v.h, v.w), v.pad);
           return m.finish();
         }});
  }

  // Input quantization of float images (scale 4: exact half-way cases).
  struct Input {
    int64_t batch;
    int c, h, w;
    float scale;
  };
  for (const Input& v :
       {Input{1, 1, 28, 28, 4.0f}, Input{3, 3, 32, 32, 21.7f}, Input{5, 5, 3, 3, 4.0f}, Input{512, 3, 8, 8, 63.5f}}) {
    const uint64_t s = seed++;
    cases.push_back({"quantize_input_" + shape_name(v.batch, v.c, v.h, v.w), v.batch,
                     [v, s] {
                       OpModel m(s);
                       m.input(v.c, v.h, v.w, v.scale);
                       return m.finish();
                     },
                     true});
  }
  return cases;
}

class CudaOp : public ::testing::TestWithParam<std::tuple<OpCase, CudaBackend>> {};

TEST_P(CudaOp, MatchesTheCpuKernels) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const auto& [op, backend] = GetParam();
  const QuantizedModel model = op.model();
  const ActShape in = model.graph.shapes()[0];
  const std::vector<float> images = op.float_input ? float_images(op.batch, in, 7) : int8_images(op.batch, in, 7);
  expect_same_as_cpu(model, backend, images, op.batch);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaOp,
                         ::testing::Combine(::testing::ValuesIn(op_cases()),
                                            kBackends),
                         [](const ::testing::TestParamInfo<CudaOp::ParamType>& info) {
                           return std::get<0>(info.param).name + "_" + backend_label(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------
// Whole networks.

class CudaNetwork : public ::testing::TestWithParam<CudaBackend> {};

QuantizedModel random_quantized(const std::string& name, uint64_t seed) {
  QuantizeOptions options;
  options.method = AmaxMethod::Max;
  options.weight_rounding = "nearest";
  return quantize_random(random_checkpoint(name, ModelOptions{}, seed), options);
}

TEST_P(CudaNetwork, RandomResNet20MatchesTheCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet20", 3);
  const ActShape in = model.graph.shapes()[0];
  for (int64_t batch : {1, 7, 256}) expect_same_as_cpu(model, GetParam(), random_images(batch, in, 40 + batch), batch);
}

TEST_P(CudaNetwork, RandomResNet18MatchesTheCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet18", 4);
  const ActShape in = model.graph.shapes()[0];
  for (int64_t batch : {3, 32}) expect_same_as_cpu(model, GetParam(), random_images(batch, in, 50 + batch), batch);
}

// Every zoo checkpoint, quantized on its training set, on its whole test set.
TEST_P(CudaNetwork, ZooModelsMatchTheCpuOnTheirTestSets) {
  SKIP_WITHOUT_CUDA_DEVICE();
  int compared = 0;
  std::string skipped;
  for (const std::string& file : list_directory(source_dir() + "/models/zoo")) {
    if (file.size() < 6 || file.substr(file.size() - 6) != ".octet") continue;
    const Checkpoint checkpoint = load_checkpoint(source_dir() + "/models/zoo/" + file);
    const std::string data_dir =
        checkpoint.dataset == "cifar10" ? cifar10_dir() : resolve_data_dir(checkpoint.dataset, "");
    if (data_dir.empty() || !path_exists(data_dir)) {
      skipped += " " + file + " (no " + checkpoint.dataset + " data)";
      continue;
    }
    SCOPED_TRACE(file);
    const QuantizedModel model = quantize_checkpoint(checkpoint, data_dir, QuantizeOptions{}).model;
    const Dataset test = load_dataset(checkpoint.dataset, data_dir, Split::Test);
    expect_same_as_cpu(model, GetParam(), normalized_images(test, model.mean, model.std, 0, 100), 100);
    if (HasFatalFailure()) return;

    const CpuEngine cpu(model);
    CudaEngine gpu(model, GetParam());
    const int64_t batch = 500;
    for (int64_t first = 0; first < test.size(); first += batch) {
      const int64_t n = std::min(batch, test.size() - first);
      const std::vector<float> images = normalized_images(test, model.mean, model.std, first, n);
      ASSERT_EQ(difference(cpu.run(images.data(), n).data, gpu.run(images.data(), n).data,
                           ActShape{model.num_classes(), 1, 1}),
                "")
          << "test images " << first << ".." << first + n - 1;
    }
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no zoo model has its dataset here:" << skipped;
  if (!skipped.empty()) std::printf("not compared:%s\n", skipped.c_str());
}

// The device-resident path gives run()'s logits, on every graph replay, and
// the profile covers every node with the convs' and linears' MACs.
TEST_P(CudaNetwork, DevicePathAndProfile) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet20", 5);
  const ActShape in = model.graph.shapes()[0];
  const int64_t batch = 64;
  const std::vector<float> images = random_images(batch, in, 60);
  CudaEngine gpu(model, GetParam());
  const Int32Tensor expected = gpu.run(images.data(), batch);
  ASSERT_EQ(cudaMemcpy(gpu.device_input(batch), images.data(), images.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the engine's stream does not wait for the legacy one
  for (int replay = 0; replay < 3; ++replay) {
    gpu.run_device(batch);
    gpu.synchronize();
    Int32Tensor logits(expected.shape);
    ASSERT_EQ(cudaMemcpy(logits.ptr(), gpu.device_logits(batch), logits.data.size() * sizeof(int32_t),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(logits.data, expected.data) << "replay " << replay;
  }

  const std::vector<CudaEngine::NodeTiming> timings = gpu.profile(batch, 3);
  ASSERT_EQ(timings.size(), model.graph.nodes.size());
  const std::vector<ActShape> shapes = model.graph.shapes();
  double total_ms = 0;
  for (size_t i = 0; i < timings.size(); ++i) {
    const Node& n = model.graph.nodes[i];
    EXPECT_EQ(timings[i].name, n.name);
    EXPECT_EQ(timings[i].op, op_name(n.op));
    EXPECT_GE(timings[i].milliseconds, 0.0);
    total_ms += timings[i].milliseconds;
    if (n.op == Op::Conv2d) {
      const ActShape x = shapes[n.inputs[0]], y = shapes[i];
      EXPECT_EQ(timings[i].macs, double(batch) * y.h * y.w * y.c * n.kernel * n.kernel * x.c) << n.name;
    } else if (n.op != Op::Linear) {
      EXPECT_EQ(timings[i].macs, 0.0) << n.name;
    }
  }
  EXPECT_GT(total_ms, 0.0);
}

// More batch sizes than the engine keeps plans for: plans are dropped and
// remade (graphs captured again) and every run still gives the CPU's logits;
// then two threads share one engine, each with its own batch size.
TEST_P(CudaNetwork, ManyBatchSizesAndThreads) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet20", 7);
  const ActShape in = model.graph.shapes()[0];
  const CpuEngine cpu(model);
  CudaEngine gpu(model, GetParam());
  const ActShape logits_shape{model.num_classes(), 1, 1};
  for (int round = 0; round < 3; ++round)
    for (int64_t batch = 1; batch <= int64_t(CudaEngine::kMaxPlans) + 3; ++batch) {
      const std::vector<float> images = random_images(batch, in, 70 + batch);
      ASSERT_EQ(difference(cpu.run(images.data(), batch).data, gpu.run(images.data(), batch).data, logits_shape), "")
          << "batch " << batch << ", round " << round;
    }
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      const int64_t batch = 5 + t;
      const std::vector<float> images = random_images(batch, in, 90 + t);
      const std::vector<int32_t> expected = cpu.run(images.data(), batch).data;
      for (int run = 0; run < 20 && failures[t].empty(); ++run)
        failures[t] = difference(expected, gpu.run(images.data(), batch).data, logits_shape);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST_P(CudaNetwork, MakeEngineOffersTheBackend) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const std::string name = cuda_backend_name(GetParam());
  const QuantizedModel model = random_quantized("resnet20", 6);
  EXPECT_EQ(make_engine(model, name)->backend(), name);
  try {
    CudaEngine(model, GetParam(), 1000);
    ADD_FAILURE() << "device 1000 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device 1000"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CudaNetwork, kBackends,
                         [](const ::testing::TestParamInfo<CudaBackend>& info) { return backend_label(info.param); });

// "cuda" picks cuda-imma on GPUs with int8 tensor cores; its kernels keep
// everything in registers and shared memory (no local memory: no spills).
TEST(CudaImma, IsTheDefaultAndItsKernelsDoNotSpill) {
  SKIP_WITHOUT_CUDA_DEVICE();
  int major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  const QuantizedModel model = random_quantized("resnet20", 8);
  EXPECT_EQ(make_engine(model, "cuda")->backend(), major >= 8 ? "cuda-imma" : "cuda-dp4a");
  for (const std::string& info : CudaEngine::imma_kernel_info()) {
    std::printf("%s\n", info.c_str());
    EXPECT_NE(info.find(" 0 B local memory"), std::string::npos) << info;
  }
}

// Built with CUDA, the backends are listed; without a device, making one
// fails with the reason instead of crashing.
TEST(CudaEngineWithoutDevice, ListsTheBackendsAndExplainsWhyItCannotStart) {
  const std::vector<std::string> backends = engine_backends();
  ASSERT_GE(backends.size(), 4u);
  EXPECT_EQ(backends[1], "cuda-imma") << "the default CUDA backend comes first";
  EXPECT_NE(std::find(backends.begin(), backends.end(), "cuda-dp4a"), backends.end());
  EXPECT_NE(std::find(backends.begin(), backends.end(), "cuda-cublaslt"), backends.end());
  std::string why_not;
  if (CudaEngine::device_available(&why_not)) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(why_not.empty());
  OpModel op(1);
  op.input(3, 4, 4);
  const QuantizedModel model = op.finish();
  try {
    make_engine(model, "cuda-dp4a");
    ADD_FAILURE() << "made a CUDA engine without a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no usable CUDA device: " + why_not), std::string::npos) << e.what();
  }
  EXPECT_NE(error_of([&] { make_engine(model, "cuda"); }).find("cuda-imma: no usable CUDA device"), std::string::npos);
}

// ---------------------------------------------------------------------------
// The device layout on the host: a deliberately naive executor that keeps
// every value where the CUDA engine keeps it (padded NHWC in one arena at the
// planned offsets, packed weights), so a wrong padding, packing or buffer
// reuse shows up here, on any machine, as a difference from the CPU runtime.

struct LayoutRun {
  std::vector<std::vector<int8_t>> values;  // per node, stripped right after the node ran
  Int32Tensor logits;
  int64_t arena_bytes = 0;
};

// cuda-imma's layout: channels aligned to 16, convs packed with its channels per tap.
LayoutRun run_in_device_layout(const QuantizedModel& model, const std::vector<float>& images, int64_t batch,
                               bool retain_all, bool imma) {
  const Graph& g = model.graph;
  const std::vector<ActShape> shapes = g.shapes();
  const cuda::ValueLayout layout = cuda::plan_values(
      g, shapes, "host layout", imma ? cuda::igemm::kChannelAlignment : cuda::kDp4aChannelAlignment);
  const cuda::ArenaPlan plan = cuda::plan_arena(g, layout, batch, retain_all);
  std::vector<int8_t> arena(static_cast<size_t>(plan.bytes), int8_t{0x5A});  // not zeros, like fresh device memory
  auto value = [&](int node) { return arena.data() + plan.offset[layout.owner[node]]; };
  LayoutRun run;
  run.arena_bytes = plan.bytes;
  run.values.resize(g.nodes.size());
  const int classes = model.num_classes();
  run.logits = Int32Tensor({batch, classes});
  for (int i = 0; i <= model.output(); ++i) {
    const Node& n = g.nodes[i];
    const NodeQuant& q = model.quant[i];
    const ActShape y = shapes[i];
    const ActShape x = n.inputs.empty() ? y : shapes[n.inputs[0]];
    const cuda::Storage& out = layout.storage[i];
    const int in_c = n.inputs.empty() ? 0 : layout.storage[n.inputs[0]].padded_c;
    const int8_t* src = n.inputs.empty() ? nullptr : value(n.inputs[0]);
    int8_t* dst = i == model.output() ? nullptr : value(i);
    auto at = [](int64_t b, int yy, int xx, int c, int h, int w, int cs) { return ((b * h + yy) * w + xx) * cs + c; };
    switch (n.op) {
      case Op::Input:
        for (int64_t b = 0; b < batch; ++b)
          for (int p = 0; p < y.h * y.w; ++p)
            for (int c = 0; c < out.padded_c; ++c)
              dst[(b * y.h * y.w + p) * out.padded_c + c] =
                  c < y.c ? quantize_input(images[(b * y.c + c) * y.h * y.w + p], q.scale) : int8_t{0};
        break;
      case Op::Conv2d:
      case Op::Linear: {
        const bool conv = n.op == Op::Conv2d;
        cuda::WeightPacking packing;
        if (imma && conv) packing = {cuda::igemm::tap_channels(x.c), cuda::igemm::kDepthMultiple};
        const cuda::PackedLayer layer = cuda::pack_layer(model, shapes, layout, i, packing);
        const int k = conv ? n.kernel : 1, stride = conv ? n.stride : 1, pad = conv ? n.padding : 0;
        const int h = conv ? x.h : 1, w = conv ? x.w : 1, oh = conv ? y.h : 1, ow = conv ? y.w : 1;
        const int channels = conv ? in_c : static_cast<int>(layout.storage[n.inputs[0]].bytes());
        const int tap_c = conv ? layer.tap_channels : channels;
        EXPECT_EQ(layer.depth, cuda::round_up(int64_t(k) * k * tap_c, imma && conv ? 32 : 4)) << n.name;
        for (int64_t b = 0; b < batch; ++b)
          for (int oy = 0; oy < oh; ++oy)
            for (int ox = 0; ox < ow; ++ox)
              for (int o = 0; o < layer.out_c; ++o) {
                int32_t acc = 0;
                for (int ky = 0; ky < k; ++ky)
                  for (int kx = 0; kx < k; ++kx) {
                    const int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                    for (int c = 0; c < tap_c; ++c)
                      acc += int32_t(src[at(b, iy, ix, c, h, w, channels)]) *
                             layer.weights[o * layer.depth + (ky * k + kx) * tap_c + c];
                  }
                const int64_t row = (b * oh + oy) * ow + ox;
                if (i == model.output()) {
                  if (o < classes) run.logits.data[row * classes + o] = acc + layer.bias[o];
                  continue;
                }
                const bool residual = n.inputs.size() == 2;
                const int32_t skip = residual ? value(n.inputs[1])[row * layer.out_c + o] : 0;
                dst[row * layer.out_c + o] = static_cast<int8_t>(
                    requantize(acc + layer.bias[o], layer.multiplier[o], skip, residual ? layer.skip_multiplier[o] : 0,
                               layer.shift[o], n.relu ? 0 : -128));
              }
        break;
      }
      case Op::MaxPool2d:
      case Op::AvgPool2d:
      case Op::GlobalAvgPool: {
        const bool global = n.op == Op::GlobalAvgPool;
        const int kh = global ? x.h : n.kernel, kw = global ? x.w : n.kernel, stride = global ? 1 : n.stride;
        for (int64_t b = 0; b < batch; ++b)
          for (int oy = 0; oy < y.h; ++oy)
            for (int ox = 0; ox < y.w; ++ox)
              for (int c = 0; c < in_c; ++c) {
                int32_t best = -128, sum = 0;
                for (int ky = 0; ky < kh; ++ky)
                  for (int kx = 0; kx < kw; ++kx) {
                    const int8_t v = src[at(b, oy * stride + ky, ox * stride + kx, c, x.h, x.w, in_c)];
                    best = std::max<int32_t>(best, v);
                    sum += v;
                  }
                dst[at(b, oy, ox, c, y.h, y.w, in_c)] =
                    n.op == Op::MaxPool2d
                        ? static_cast<int8_t>(best)
                        : static_cast<int8_t>(requantize(sum, q.multiplier.data[0], 0, 0, q.shift.data[0], -128));
              }
        break;
      }
      case Op::Add:
        for (int64_t e = 0; e < batch * out.bytes(); ++e)
          dst[e] = static_cast<int8_t>(requantize(src[e], q.multiplier.data[0], value(n.inputs[1])[e],
                                                  q.multiplier.data[1], q.shift.data[0], n.relu ? 0 : -128));
        break;
      case Op::ReLU:
        for (int64_t e = 0; e < batch * out.bytes(); ++e) dst[e] = std::max<int8_t>(src[e], 0);
        break;
      case Op::ShortcutA:
        for (int64_t b = 0; b < batch; ++b)
          for (int oy = 0; oy < y.h; ++oy)
            for (int ox = 0; ox < y.w; ++ox)
              for (int c = 0; c < out.padded_c; ++c) {
                const int from = c - n.channels;
                dst[at(b, oy, ox, c, y.h, y.w, out.padded_c)] =
                    from >= 0 && from < x.c ? src[at(b, 2 * oy, 2 * ox, from, x.h, x.w, in_c)] : int8_t{0};
              }
        break;
      case Op::Flatten: break;
      case Op::BatchNorm2d: ADD_FAILURE() << "batch norm in a quantized graph";
    }
    if (i != model.output())
      run.values[i] = cuda::strip_padding(std::vector<int8_t>(value(i), value(i) + batch * out.bytes()), out, batch);
  }
  return run;
}

// The host run in the device layout (dp4a's and imma's), reusing buffers or
// not, gives the CPU runtime's values at every node and its logits.
void expect_device_layout_matches_cpu(const QuantizedModel& model, const std::vector<float>& images, int64_t batch) {
  const std::vector<ActShape> shapes = model.graph.shapes();
  const CpuEngine cpu(model);
  std::vector<std::vector<int8_t>> expected(model.graph.nodes.size());
  const Int32Tensor logits = cpu.run(
      images.data(), batch, [&](int node, const int8_t* v, int64_t count) { expected[node].assign(v, v + count); });
  for (bool imma : {false, true}) {
    int64_t arena_bytes[2] = {0, 0};
    for (bool retain_all : {true, false}) {
      const LayoutRun run = run_in_device_layout(model, images, batch, retain_all, imma);
      arena_bytes[retain_all] = run.arena_bytes;
      const std::string how = std::string(imma ? " (imma layout)" : "") + (retain_all ? "" : " with buffer reuse");
      for (int i = 0; i < model.output(); ++i)
        ASSERT_EQ(difference(expected[i], run.values[i], shapes[i]), "")
            << "node " << i << " '" << model.graph.nodes[i].name << "'" << how;
      ASSERT_EQ(difference(logits.data, run.logits.data, ActShape{model.num_classes(), 1, 1}), "") << "logits" << how;
    }
    EXPECT_LE(arena_bytes[false], arena_bytes[true]);
  }
}

class CudaDeviceLayoutOnHost : public ::testing::TestWithParam<OpCase> {};

TEST_P(CudaDeviceLayoutOnHost, MatchesTheCpuRuntime) {
  const OpCase& op = GetParam();
  const QuantizedModel model = op.model();
  const ActShape in = model.graph.shapes()[0];
  const int64_t batch = std::min<int64_t>(op.batch, 3);
  expect_device_layout_matches_cpu(model, op.float_input ? float_images(batch, in, 8) : int8_images(batch, in, 8),
                                   batch);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaDeviceLayoutOnHost, ::testing::ValuesIn(op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

TEST(CudaDeviceLayout, RandomNetworksMatchTheCpuRuntimeOnTheHost) {
  QuantizeOptions options;
  options.method = AmaxMethod::Max;
  options.weight_rounding = "nearest";
  for (const auto& [name, channels, size] :
       {std::tuple<const char*, int, int>{"resnet20", 3, 32}, {"lenet5", 1, 28}, {"lenet5", 3, 32}}) {
    SCOPED_TRACE(std::string(name) + " on " + std::to_string(channels) + "x" + std::to_string(size));
    const ModelOptions o{channels, size, size};
    const QuantizedModel model = quantize_random(random_checkpoint(name, o, 21), options, 16);
    expect_device_layout_matches_cpu(model, random_images(2, model.graph.shapes()[0], 22), 2);
  }
}

// Values alive at the same time never share bytes; every buffer is aligned;
// reuse makes ResNet-20's arena over 3 times smaller than one buffer each
// (about 3 stage-1 activations are alive at once, out of 20 values).
TEST(CudaDeviceLayout, ArenaSeparatesLiveValuesAndReusesDeadOnes) {
  QuantizeOptions options;
  options.method = AmaxMethod::Max;
  options.weight_rounding = "nearest";
  const QuantizedModel model = quantize_random(random_checkpoint("resnet20", ModelOptions{}, 23), options, 8);
  const Graph& g = model.graph;
  const cuda::ValueLayout layout = cuda::plan_values(g, g.shapes(), "test", cuda::kDp4aChannelAlignment);
  const int64_t batch = 5;
  const cuda::ArenaPlan reuse = cuda::plan_arena(g, layout, batch, false);
  const cuda::ArenaPlan separate = cuda::plan_arena(g, layout, batch, true);
  for (int u = 0; u < model.output(); ++u) {
    if (layout.owner[u] != u) continue;
    EXPECT_EQ(reuse.offset[u] % cuda::kBufferAlignment, 0);
    for (int reader = u + 1; reader <= model.output(); ++reader)
      for (int in : g.nodes[reader].inputs) {
        if (layout.owner[in] == u) {
          EXPECT_GE(reuse.last_use[u], reader) << g.nodes[u].name;
        }
      }
    for (int v = u + 1; v < model.output(); ++v) {
      if (layout.owner[v] != v || v > reuse.last_use[u]) continue;  // v is written after u's last reader
      const int64_t u_end = reuse.offset[u] + batch * layout.storage[u].bytes();
      const int64_t v_end = reuse.offset[v] + batch * layout.storage[v].bytes();
      EXPECT_TRUE(u_end <= reuse.offset[v] || v_end <= reuse.offset[u])
          << g.nodes[u].name << " and " << g.nodes[v].name << " overlap while both are alive";
    }
  }
  EXPECT_LT(reuse.bytes * 3, separate.bytes);
}

}  // namespace
}  // namespace octet
