// The CUDA engine's own behaviour on every CUDA backend: the zoo checkpoints'
// complete test sets against the CPU runtime, the device-resident path and
// CUDA-graph replays, the per-node profile, bounded plans and threads, device
// selection and the default backend. Every operator and random networks are
// compared with the reference by test_backend_ops. Without a GPU these skip.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "common/error.h"
#include "data/dataset.h"
#include "quant/pipeline.h"
#include "runtime/cpu/cpu_engine.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/cuda/cuda_engine.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/folded_input.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/op_support.h"
#include "tests/cuda/ptx_isa.h"
#include "tests/cuda/wgmma_probe.h"
#include "tests/support/difference.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/op_model.h"
#include "tests/support/random_model.h"
#include "tests/support/test_util.h"

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

class CudaNetwork : public ::testing::TestWithParam<CudaBackend> {};

QuantizedModel random_quantized(const std::string& name, uint64_t seed) {
  return quantize_random(random_checkpoint(name, ModelOptions{}, seed), quick_quantize_options());
}

// Sets an environment variable for a scope, then restores it (tools/gpu_check.sh sets OCTET_WGMMA).
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Every zoo checkpoint, quantized on its training set with signed and with
// unsigned activations (zero point -128, stored uint8: runtime/cuda/stored_value.h;
// cuBLASLt's s8 GEMMs refuse those), on its whole test set.
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
    const Dataset test = load_dataset(checkpoint.dataset, data_dir, Split::Test);
    for (const bool unsigned_activations : {false, true}) {
      if (unsigned_activations && GetParam() == CudaBackend::CublasLt) continue;
      SCOPED_TRACE(file + (unsigned_activations ? ", unsigned activations" : ", signed activations"));
      QuantizeOptions options;
      options.unsigned_activations = unsigned_activations;
      const QuantizedModel model = quantize_checkpoint(checkpoint, data_dir, options).model;
      ASSERT_EQ(model.has_zero_points(), unsigned_activations);
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

  const std::vector<Engine::NodeTiming> timings = gpu.profile(images.data(), batch, 1, 3);
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

// "" if `gpu` gives `cpu`'s logits on `batch` random images (from `seed`) on
// its first (direct), second (captured) and two later (replayed) runs, else
// the first difference, naming the run.
std::string differs_over_runs(CudaEngine& gpu, const CpuEngine& cpu, int64_t batch, uint64_t seed) {
  const QuantizedModel& model = cpu.model();
  const std::vector<float> images = random_images(batch, model.graph.shapes()[0], seed);
  const std::vector<int32_t> expected = cpu.run(images.data(), batch).data;
  for (int run = 0; run < 4; ++run) {
    const std::string d = difference(expected, gpu.run(images.data(), batch).data, {model.num_classes(), 1, 1});
    if (!d.empty()) return "run " + std::to_string(run) + ": " + d;
  }
  return "";
}

// Every operator the CUDA op launchers run (op_launchers.cu), each kernel
// after another of them: what programmatic launches must keep in order.
QuantizedModel every_launcher_in_a_row(uint64_t seed) {
  OpModel m(seed);
  int x = m.conv(m.input(6, 12, 12), 16, 3, 1, 1, false);
  x = m.relu(m.max_pool(x, 2, 2));
  x = m.add(m.avg_pool(x, 3, 1, 1), x, true);
  x = m.layer_norm(m.shortcut_a(x, 4), 1e-5f, 30.0f);
  x = m.prelu(m.activation_op(x, "silu", 0.0f, 0.0f, 18.0f), 20.0f);
  x = m.concat({x, m.channel_shuffle(x, 4)});
  x = m.mul(x, m.global_avg_pool(x));
  Node slice, pad;
  slice.op = Op::ChannelSlice, slice.inputs = {x}, slice.offset = 8, slice.channels = 20;
  pad.op = Op::Pad2d, pad.inputs = {m.keeps_scale(slice)}, pad.pad_bottom = 1, pad.pad_right = 1;
  m.keeps_scale(pad);
  return m.finish();
}

// ResNet-18's projection shortcuts run on the engine's second stream, beside
// their block's first conv (stream_schedule.h): the CPU's logits on the first
// (direct), second (captured) and later (replayed) runs of several batch
// sizes, with the side stream and without it (OCTET_SIDE_STREAM=0); an
// OCTET_SIDE_STREAM other than 0 or 1 is refused, named.
TEST_P(CudaNetwork, ShortcutsBesideTheMainStreamKeepTheCpuLogits) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet18", 17);
  const CpuEngine cpu(model);
  for (const char* side_stream : {"1", "0"}) {
    const ScopedEnvironment chosen("OCTET_SIDE_STREAM", side_stream);
    CudaEngine gpu(model, GetParam());
    for (const int64_t batch : {1, 3, 64})
      ASSERT_EQ(differs_over_runs(gpu, cpu, batch, 40 + batch), "")
          << "OCTET_SIDE_STREAM=" << side_stream << ", batch " << batch;
  }
  const ScopedEnvironment unclear("OCTET_SIDE_STREAM", "yes");
  const std::string refused = error_of([&] { CudaEngine refusing(model, GetParam()); });
  EXPECT_NE(refused.find("OCTET_SIDE_STREAM: 'yes' is neither 0 nor 1"), std::string::npos) << refused;
}

// cuda-imma with K split where a conv has few output tiles (OCTET_SPLIT_K=1;
// implicit_gemm.h SplitK): ResNet-18 at batch 1 and 3 keeps the CPU's logits on
// direct, captured and replayed runs, tuned (split or whole, as timed) and
// with the cost model's choice, whose profile names the splits (its last
// stages have 8 to 32 tiles of 36 to 72 K tiles); `EveryTileMatchesTheCpuRuntime`
// splits every tile's long-K layers when run so (the split_k stage). An
// OCTET_SPLIT_K other than 0 or 1 is refused, named.
TEST(CudaImma, SplitKKeepsTheCpuLogits) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const ScopedEnvironment split("OCTET_SPLIT_K", "1");
  const QuantizedModel model = random_quantized("resnet18", 23);
  const CpuEngine cpu(model);
  CudaEngine tuned(model, CudaBackend::Imma);
  for (const int64_t batch : {1, 3})
    ASSERT_EQ(differs_over_runs(tuned, cpu, batch, 60 + batch), "") << "batch " << batch;
  const ScopedEnvironment untimed("OCTET_IMMA_TUNE", "0");
  CudaEngine modelled(model, CudaBackend::Imma);
  for (const int64_t batch : {1, 3}) {
    ASSERT_EQ(differs_over_runs(modelled, cpu, batch, 60 + batch), "") << "batch " << batch;
    const std::vector<float> images = random_images(batch, model.graph.shapes()[0], 60 + batch);
    int split_convs = 0;
    for (const Engine::NodeTiming& t : modelled.profile(images.data(), batch, 1, 1))
      split_convs += t.kernel.find(" K/") != std::string::npos;
    EXPECT_GT(split_convs, 0) << "batch " << batch << ": no conv split its K";
  }
  const ScopedEnvironment unclear("OCTET_SPLIT_K", "-1");
  const std::string refused = error_of([&] { CudaEngine refusing(model, CudaBackend::Imma); });
  EXPECT_NE(refused.find("OCTET_SPLIT_K: '-1' is neither 0 nor 1"), std::string::npos) << refused;
}

// Every kernel after the first launched programmatically (OCTET_PDL=1 on
// compute capability 9.0+: each may start beside the kernel before it and
// waits for it before its first load of a value): the CPU's logits on the
// first (direct), second (captured) and later (replayed) runs of ResNet-18
// and -20 on cuda-imma, with the shortcuts beside or not, and on every
// backend of a network of grouped and depthwise convs and one of every other
// operator in a row; an OCTET_PDL other than 0 or 1 is refused, named.
TEST(CudaEngineLaunches, ProgrammaticLaunchesKeepTheCpuLogits) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const ScopedEnvironment programmatic("OCTET_PDL", "1");
  struct Run {
    std::string name;
    QuantizedModel model;
    std::vector<CudaBackend> backends;
  };
  const std::vector<Run> runs = {
      {"resnet18", random_quantized("resnet18", 19), {CudaBackend::Imma}},
      {"resnet20", random_quantized("resnet20", 19), {CudaBackend::Imma}},
      {"grouped", quantize_random(random_grouped_checkpoint(19), quick_quantize_options(), 32),
       {CudaBackend::Imma, CudaBackend::Dp4a, CudaBackend::CublasLt}},
      {"every launcher", every_launcher_in_a_row(19), {CudaBackend::Imma, CudaBackend::Dp4a, CudaBackend::CublasLt}}};
  for (const Run& r : runs) {
    const CpuEngine cpu(r.model);
    for (const CudaBackend backend : r.backends) {
      ASSERT_EQ(cuda::why_model_unsupported_on(cuda_backend_name(backend), r.model), "") << r.name;
      for (const char* side_stream : {"1", "0"}) {
        const ScopedEnvironment chosen("OCTET_SIDE_STREAM", side_stream);
        CudaEngine gpu(r.model, backend);
        for (const int64_t batch : {1, 64})
          ASSERT_EQ(differs_over_runs(gpu, cpu, batch, 50 + batch), "")
              << r.name << " on " << cuda_backend_name(backend) << ", OCTET_SIDE_STREAM=" << side_stream << ", batch "
              << batch;
      }
    }
  }
  const ScopedEnvironment unclear("OCTET_PDL", "2");
  const std::string refused = error_of([&] { CudaEngine refusing(runs[1].model, CudaBackend::Imma); });
  EXPECT_NE(refused.find("OCTET_PDL: '2' is neither 0 nor 1"), std::string::npos) << refused;
}

// An activation that is a conv's only reader runs in the conv's epilogue
// (device_layout.h ValueLayout::fused_activation): the profile names it so,
// the logits are the CPU's, and with every value retained (the hook) each
// node's value is the CPU's, the conv's own included (then nothing is fused).
TEST_P(CudaNetwork, ActivationsAfterConvsRunInTheirEpilogue) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = quantize_random(random_imagenet_ops_checkpoint(31), quick_quantize_options(), 8);
  const std::string why = cuda::why_model_unsupported_on(cuda_backend_name(GetParam()), model);
  if (!why.empty()) GTEST_SKIP() << why;
  const int64_t batch = 9;
  const std::vector<float> images = random_images(batch, model.graph.shapes()[0], 17);
  const CpuEngine cpu(model);
  CudaEngine gpu(model, GetParam());
  std::vector<std::vector<int8_t>> cpu_values(model.graph.nodes.size()), gpu_values(model.graph.nodes.size());
  const Int32Tensor expected = cpu.run(images.data(), batch, [&](int node, const int8_t* v, int64_t count) {
    cpu_values[node].assign(v, v + count);
  });
  ASSERT_EQ(gpu.run(images.data(), batch).data, expected.data);
  ASSERT_EQ(gpu.run(images.data(), batch, [&](int node, const int8_t* v, int64_t count) {
              gpu_values[node].assign(v, v + count);
            }).data,
            expected.data);
  for (size_t i = 0; i < cpu_values.size(); ++i) EXPECT_EQ(gpu_values[i], cpu_values[i]) << model.graph.nodes[i].name;

  const std::vector<Engine::NodeTiming> timings = gpu.profile(images.data(), batch, 1, 2);
  const int alignment =
      GetParam() == CudaBackend::Imma ? cuda::igemm::kChannelAlignment : cuda::kDp4aChannelAlignment;
  const cuda::ValueLayout layout = cuda::plan_model_values(model, model.graph.shapes(), "test", alignment);
  int fused = 0;
  for (size_t i = 0; i < timings.size(); ++i)
    if (const int activation = layout.fused_activation[i]; activation >= 0) {
      EXPECT_EQ(timings[activation].kernel, "in-layer-epilogue") << timings[activation].name;
      ++fused;
    }
  EXPECT_EQ(fused, 4);
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

// Whether the device runs sm_90a code (cuda-imma's wgmma tiles): compute capability 9.0.
bool runs_wgmma() {
  int device = 0, major = 0, minor = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
         minor == 0;
}

// The implicit GEMM cuda-imma runs for conv `node` of `model`: over the
// folded image where the engine folds its input (folded_input.h).
cuda::igemm::Problem imma_problem(const QuantizedModel& model, int node, int batch) {
  const Node& n = model.graph.nodes[node];
  const std::vector<ActShape> shapes = model.graph.shapes();
  const ActShape x = shapes[n.inputs[0]];
  cuda::igemm::Problem p =
      cuda::igemm::conv_problem(batch, x.h, x.w, x.c, n.channels, n.kernel, n.stride, n.padding);
  const cuda::ImageFold fold = cuda::image_fold(model.graph, shapes, n.inputs[0]);
  if (fold.kind == cuda::ImageFold::kNone) return p;
  const cuda::FoldedConv f = cuda::folded_conv(fold, n);
  p.in_h = f.in_h, p.in_w = f.in_w, p.in_stride = fold.stored_c(), p.tap_c = f.tap_channels;
  p.kernel = f.kernel, p.stride = f.stride, p.padding = f.padding;
  return p;
}

// Every tile configuration, forced with OCTET_IMMA_TILE, on the convolutions
// it can run, reading signed and unsigned (zero point -128: mma's u8 x s8)
// inputs: node by node the CPU runtime's bits. The tuner may pick any tile
// for a shape, so each must be right on its own. The wgmma tiles (OCTET_WGMMA=1)
// on a device of compute capability 9.0 only.
TEST(CudaImma, EveryTileMatchesTheCpuRuntime) {
  SKIP_WITHOUT_CUDA_DEVICE();
  struct Layer {
    int batch, channels, size, out_c, kernel, stride;
    bool residual;
  };
  const Layer layers[] = {
      {3, 3, 17, 64, 3, 1, false},    // a first layer: 4-byte words
      {2, 6, 9, 20, 5, 2, true},      // LeNet-like: words, kernel 5, stride 2, residual
      {5, 64, 9, 64, 3, 1, true},     // several row tiles, residual
      {2, 32, 8, 128, 1, 2, false},   // 1x1 stride-2 shortcut
      {1, 144, 4, 48, 3, 1, true},    // long K, channels not a multiple of 32
      {1, 512, 2, 256, 3, 1, false},  // ResNet-18 layer4-like at batch 1
      {2, 16, 33, 16, 3, 2, false},   // 16 channels, odd size
  };
  const bool wgmma = runs_wgmma();
  const ScopedEnvironment offered("OCTET_WGMMA", "1");
  for (int tile = 0; tile < cuda::igemm::kTileCount; ++tile) {
    const std::string name = cuda::igemm::tile_config(tile).name;
    if (cuda::igemm::tile_config(tile).wgmma_n > 0 && !wgmma) continue;
    const ScopedEnvironment forced("OCTET_IMMA_TILE", name);
    int ran = 0;
    for (const Layer& l : layers)
      for (const bool unsigned_input : {false, true}) {
        const int padding = l.kernel / 2;
        OpModel m(100 + tile);
        int x = m.input(l.channels, l.size, l.size);
        if (unsigned_input) {  // the image rescaled at zero point -128, and every value after it so
          m.set_zero_point(-128);
          x = m.rescaled(x, 0.5f);
        }
        const std::string where = name + (unsigned_input ? ", unsigned" : "");
        const int skip = l.residual ? m.conv(x, l.out_c, l.kernel, l.stride, padding, false) : -1;
        const int conv = m.conv(x, l.out_c, l.kernel, l.stride, padding, true, skip);
        const QuantizedModel model = m.finish();
        if (!cuda::igemm::unsupported(imma_problem(model, conv, l.batch), tile).empty()) continue;
        const OpCase images_of{"layer", l.batch, nullptr, CaseImages::Int8};
        const std::vector<float> images = case_images(images_of, model.graph.shapes()[0], l.batch, 11);
        const CpuEngine cpu(model);
        std::vector<std::vector<int8_t>> expected(model.graph.nodes.size());
        const Int32Tensor logits = cpu.run(images.data(), l.batch, [&](int node, const int8_t* v, int64_t count) {
          expected[node].assign(v, v + count);
        });
        CudaEngine gpu(model, CudaBackend::Imma);
        gpu.retain_node_outputs(true);
        EXPECT_EQ(gpu.run(images.data(), l.batch).data, logits.data) << where;
        for (int i = 0; i < model.output(); ++i)
          ASSERT_EQ(gpu.node_output(i), expected[i]) << where << ", node " << model.graph.nodes[i].name;
        for (const Engine::TimedChoice& c : gpu.timed_choices()) {
          EXPECT_EQ(c.chosen.substr(0, c.chosen.find(' ')), name) << c.problem << ": the forced tile, split or whole";
          EXPECT_TRUE(c.trials.empty()) << c.problem << ": one candidate is not timed";
        }
        ++ran;
      }
    EXPECT_GT(ran, 0) << name << " ran no layer";
  }
}

// Each conv shape's candidate tiles are timed once, the fastest kept; with
// OCTET_IMMA_TUNE=0 the cost model's choice is taken untimed. Either way the
// logits are the same.
TEST(CudaImma, TunerKeepsTheFastestCandidate) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet20", 9);
  const int64_t batch = 32;
  const std::vector<float> images = random_images(batch, model.graph.shapes()[0], 61);
  CudaEngine tuned(model, CudaBackend::Imma);
  const Int32Tensor logits = tuned.run(images.data(), batch);
  const std::vector<Engine::TimedChoice> choices = tuned.timed_choices();
  ASSERT_GE(choices.size(), 3u) << "ResNet-20 has a first layer and three stages of convs";
  int timed = 0;
  for (const Engine::TimedChoice& c : choices) {
    if (c.trials.empty()) continue;
    ++timed;
    double fastest = c.trials.front().second;
    for (const auto& [tile, ms] : c.trials) {
      EXPECT_GT(ms, 0.0) << c.problem << " " << tile;
      fastest = std::min(fastest, ms);
    }
    const auto chosen =
        std::find_if(c.trials.begin(), c.trials.end(), [&](const auto& t) { return t.first == c.chosen; });
    ASSERT_NE(chosen, c.trials.end()) << c.problem;
    EXPECT_EQ(chosen->second, fastest) << c.problem;
    // At least 2 rounds of 4 launches of each candidate, its fastest counting.
    EXPECT_GE(c.tuning_milliseconds, 2 * 4 * fastest * c.trials.size()) << c.problem;
  }
  EXPECT_GT(timed, 0);
  tuned.run(images.data(), batch);
  EXPECT_EQ(tuned.timed_choices().size(), choices.size()) << "a shape met again is not timed again";

  const ScopedEnvironment untimed("OCTET_IMMA_TUNE", "0");
  CudaEngine modelled(model, CudaBackend::Imma);
  EXPECT_EQ(modelled.run(images.data(), batch).data, logits.data);
  EXPECT_TRUE(modelled.timed_choices().empty());
}

// ResNet-20's first conv (3x3, stride 1, over the 3-channel image) from the
// float image in one kernel (patch_conv.cuh), forced on and off with
// OCTET_PATCH_CONV: the CPU's logits either way, and the profile names it;
// never where every value is retained (the patches are the image's value).
TEST(CudaImma, PatchConvComputesTheFirstConvFromTheFloatImage) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet20", 12);
  const int64_t batch = 7;
  const std::vector<float> images = random_images(batch, model.graph.shapes()[0], 63);
  const Int32Tensor expected = CpuEngine(model).run(images.data(), batch);
  int conv = -1;
  for (int i = 0; i < int(model.graph.nodes.size()) && conv < 0; ++i)
    if (model.graph.nodes[i].op == Op::Conv2d && model.graph.nodes[i].inputs[0] == 0) conv = i;
  ASSERT_GE(conv, 0);
  for (const bool fused : {true, false}) {
    const ScopedEnvironment forced("OCTET_PATCH_CONV", fused ? "1" : "0");
    CudaEngine gpu(model, CudaBackend::Imma);
    EXPECT_EQ(gpu.run(images.data(), batch).data, expected.data) << (fused ? "fused" : "not fused");
    const std::vector<Engine::NodeTiming> timings = gpu.profile(images.data(), batch, 1, 1);
    EXPECT_EQ(timings[conv].kernel == "patch-conv", fused) << timings[conv].kernel;
    EXPECT_EQ(timings[0].kernel == "in-patch-conv", fused) << timings[0].kernel;
  }
  const ScopedEnvironment forced("OCTET_PATCH_CONV", "1");
  CudaEngine retaining(model, CudaBackend::Imma);
  retaining.retain_node_outputs(true);
  EXPECT_EQ(retaining.run(images.data(), batch).data, expected.data);
  EXPECT_NE(retaining.profile(images.data(), batch, 1, 1)[conv].kernel, "patch-conv");
  const ScopedEnvironment unclear("OCTET_PATCH_CONV", "on");
  CudaEngine refusing(model, CudaBackend::Imma);
  const std::string refused = error_of([&] { refusing.run(images.data(), batch); });
  EXPECT_NE(refused.find("OCTET_PATCH_CONV: 'on' is neither 0 nor 1"), std::string::npos) << refused;
}

// cuda-imma's wgmma tiles run in test_cuda_host on tests/cuda/ptx_isa.h's
// reading of wgmma and of the descriptors: here is the GPU's own, on one
// warpgroup, register by register (signed and uint8 A, n 64 and 256).
TEST(CudaImma, WgmmaReadsItsOperandsAsTheCpuEmulationDoes) {
  SKIP_WITHOUT_CUDA_DEVICE();
  if (!runs_wgmma()) GTEST_SKIP() << "wgmma runs on compute capability 9.0 only";
  using cuda::igemm::kWgmmaM;
  constexpr int kK = 128;
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (const int n : {64, 256})
    for (const bool a_unsigned : {false, true}) {
      std::vector<int8_t> a(size_t(kWgmmaM) * kK), b(size_t(n) * kK);
      for (int8_t& v : a) v = static_cast<int8_t>(byte(rng));
      for (int8_t& v : b) v = static_cast<int8_t>(byte(rng));
      const std::vector<int32_t> got = cuda::wgmma_probe(a, b, n, a_unsigned);
      // The same stage on the CPU, from byte 0, multiplied as the emulation reads it.
      std::vector<int8_t> shared(size_t(kWgmmaM + n) * kK);
      for (int i = 0; i < kWgmmaM * kK; ++i) shared[cuda::igemm::tile_offset(i / kK, i % kK, kK)] = a[i];
      for (int i = 0; i < n * kK; ++i) shared[kWgmmaM * kK + cuda::igemm::tile_offset(i / kK, i % kK, kK)] = b[i];
      std::vector<int32_t> want(got.size(), 0);
      std::array<int32_t*, 128> registers{};
      for (int t = 0; t < 128; ++t) registers[t] = &want[size_t(t) * n / 2];
      for (int s = 0; s < kK / 32; ++s)
        ptx::wgmma_m64nNk32(shared.data(), shared.size(), 0, cuda::igemm::wgmma_descriptor(32 * s),
                            cuda::igemm::wgmma_descriptor(kWgmmaM * kK + 32 * s), n, a_unsigned, registers);
      int different = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && different++ < 4)
          ADD_FAILURE() << "n " << n << (a_unsigned ? " u8" : " s8") << ": thread " << i / (n / 2) << " register "
                        << i % (n / 2) << ": GPU " << got[i] << ", emulation " << want[i];
      EXPECT_EQ(different, 0) << "of " << got.size() << " registers (n " << n << ")";
    }
}

// The wgmma tiles, not yet run on a GPU when they were written, are candidates
// only where OCTET_WGMMA=1 asks for them (and the device runs sm_90a).
TEST(CudaImma, WgmmaTilesAreCandidatesOnlyWhenAskedFor) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const QuantizedModel model = random_quantized("resnet20", 9);
  const int64_t batch = 64;
  const std::vector<float> images = random_images(batch, model.graph.shapes()[0], 62);
  const auto tiles_timed = [&](const char* wgmma) {
    const ScopedEnvironment offered("OCTET_WGMMA", wgmma);
    CudaEngine engine(model, CudaBackend::Imma);
    const Int32Tensor logits = engine.run(images.data(), batch);
    std::set<std::string> tiles;
    for (const Engine::TimedChoice& c : engine.timed_choices()) {
      tiles.insert(c.chosen);
      for (const auto& trial : c.trials) tiles.insert(trial.first);
    }
    return std::make_pair(logits, tiles);
  };
  const auto [off_logits, off] = tiles_timed("0");
  const auto [on_logits, on] = tiles_timed("1");
  EXPECT_EQ(on_logits.data, off_logits.data);
  const auto wgmma_tile = [](const std::string& name) {
    const int i = cuda::igemm::tile_index(name);
    return i >= 0 && cuda::igemm::tile_config(i).wgmma_n > 0;
  };
  EXPECT_TRUE(std::none_of(off.begin(), off.end(), wgmma_tile));
  EXPECT_EQ(std::any_of(on.begin(), on.end(), wgmma_tile), runs_wgmma());
  const ScopedEnvironment unclear("OCTET_WGMMA", "yes");
  const std::string refused = error_of([&] { CudaEngine engine(model, CudaBackend::Imma); });
  EXPECT_NE(refused.find("OCTET_WGMMA: 'yes' is neither 0 nor 1"), std::string::npos) << refused;
}

// Built with CUDA, the backends are listed; without a device, making one
// fails with the reason instead of crashing.
TEST(CudaEngineWithoutDevice, ListsTheBackendsAndExplainsWhyItCannotStart) {
  const std::vector<std::string> backends = engine_backend_names();
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
  EXPECT_EQ(CudaEngine::device_description(), "no usable CUDA device: " + why_not);
}

// What benchmark reports say of the card: its own name and figures.
TEST(CudaEngineDevice, DescriptionNamesTheCard) {
  SKIP_WITHOUT_CUDA_DEVICE();
  cudaDeviceProp d{};
  ASSERT_EQ(cudaGetDeviceProperties(&d, 0), cudaSuccess);
  const std::string description = CudaEngine::device_description();
  EXPECT_EQ(description.rfind(std::string(d.name) + ", compute capability " + std::to_string(d.major) + "." +
                                  std::to_string(d.minor) + ", " + std::to_string(d.multiProcessorCount) +
                                  " multiprocessors, ",
                              0),
            0u)
      << description;
  EXPECT_NE(description.find(" MiB L2; driver "), std::string::npos) << description;
}

// cuBLASLt is not linked but opened on first use: that works without a GPU.
TEST(CublasLtLibrary, OpensOnFirstUseAndResolvesItsFunctions) {
  const cuda::CublasLtLibrary& lt = cuda::cublaslt();
  EXPECT_EQ(&lt, &cuda::cublaslt());
  EXPECT_STREQ(lt.status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_NE(std::string(lt.status_string(CUBLAS_STATUS_INVALID_VALUE)), "");
  for (const void* f : {reinterpret_cast<const void*>(lt.create), reinterpret_cast<const void*>(lt.matmul),
                        reinterpret_cast<const void*>(lt.algo_get_heuristic),
                        reinterpret_cast<const void*>(lt.layout_destroy)})
    EXPECT_NE(f, nullptr);
}

}  // namespace
}  // namespace octet
