#include "runtime/cuda/cuda_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "graph/op.h"
#include "runtime/cuda/common.cuh"
#include "runtime/cuda/conv2d_dp4a.cuh"
#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/eltwise.cuh"
#include "runtime/cuda/epilogue.cuh"
#include "runtime/cuda/gemm_cublaslt.cuh"
#include "runtime/cuda/im2col.cuh"
#include "runtime/cuda/linear_dp4a.cuh"
#include "runtime/cuda/op_support.h"
#include "runtime/cuda/plan_cache.h"
#include "runtime/cuda/pool_linear.cuh"
#include "runtime/cuda/pool.cuh"
#include "runtime/cuda/quantize_input.cuh"
#include "runtime/cuda/shortcut_a.cuh"
#include "runtime/cuda/tile_tuner.h"

namespace octet {

namespace {

using cuda::DeviceBuffer;

constexpr size_t kCublasLtWorkspace = size_t{32} << 20;  // NVIDIA's recommendation for Hopper
// Timed launches per cuda-imma tile candidate (the fastest counts), after one untimed.
constexpr int kTuningRuns = 3;

// OCTET_IMMA_TUNE=0: take the cost model's tile instead of timing the candidates.
bool tile_tuning_enabled() {
  const char* v = std::getenv("OCTET_IMMA_TUNE");
  return !(v && std::string(v) == "0");
}

const char* backend_name(CudaBackend backend) { return cuda_backend_name(backend); }

int channel_alignment(CudaBackend backend) {
  return backend == CudaBackend::Imma ? cuda::igemm::kChannelAlignment : cuda::kDp4aChannelAlignment;
}

template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> buffer(host.size());
  if (!host.empty()) CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

// A conv's or linear's cuda::PackedLayer on the device.
struct DeviceLayer {
  int out_c = 0, tap_channels = 0;
  int64_t depth = 0;
  DeviceBuffer<int8_t> weights;
  DeviceBuffer<int32_t> bias, multiplier, shift, skip_multiplier;

  DeviceLayer() = default;
  explicit DeviceLayer(const cuda::PackedLayer& p)
      : out_c(p.out_c),
        tap_channels(p.tap_channels),
        depth(p.depth),
        weights(upload(p.weights)),
        bias(upload(p.bias)),
        multiplier(upload(p.multiplier)),
        shift(upload(p.shift)),
        skip_multiplier(upload(p.skip_multiplier)) {}
};

// Why `device` cannot run this build's kernels, or "".
std::string device_unusable(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear it: the error is reported here, not by the next call
    return std::string("cudaGetDeviceCount failed with error ") + std::to_string(static_cast<int>(status)) + " " +
           cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  }
  if (count == 0) return "no CUDA device found";
  if (device < 0 || device >= count)
    return "device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " devices)";
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return "cannot read the compute capability of device " + std::to_string(device);
  }
#if defined(__CUDA_ARCH_LIST__)
  // The oldest architecture built (its PTX runs on any newer device).
  constexpr int kArchitectures[] = {__CUDA_ARCH_LIST__};
  const int oldest = *std::min_element(std::begin(kArchitectures), std::end(kArchitectures));
  if (major * 100 + minor * 10 < oldest)
    return "device " + std::to_string(device) + " has compute capability " + std::to_string(major) + "." +
           std::to_string(minor) + ", older than the oldest architecture this octet was built for (" +
           std::to_string(oldest / 100) + "." + std::to_string(oldest % 100 / 10) + ")";
#endif
  return "";
}

template <typename Handle, typename Status, Status (*Destroy)(Handle)>
struct Destroyer {
  void operator()(Handle h) const { Destroy(h); }
};
using StreamOwner =
    std::unique_ptr<std::remove_pointer_t<cudaStream_t>, Destroyer<cudaStream_t, cudaError_t, cudaStreamDestroy>>;
struct LtDestroyer {
  void operator()(cublasLtHandle_t h) const { cuda::cublaslt().destroy(h); }
};
using LtOwner = std::unique_ptr<std::remove_pointer_t<cublasLtHandle_t>, LtDestroyer>;
using GraphOwner =
    std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, Destroyer<cudaGraph_t, cudaError_t, cudaGraphDestroy>>;
using GraphExecOwner = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>,
                                       Destroyer<cudaGraphExec_t, cudaError_t, cudaGraphExecDestroy>>;

// Events destroyed with the object (for profile() and the tile timing).
class Events {
 public:
  explicit Events(size_t count) : events_(count, nullptr) {
    for (cudaEvent_t& e : events_) CUDA_CHECK(cudaEventCreate(&e));
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    for (cudaEvent_t e : events_)
      if (e) cudaEventDestroy(e);
  }
  cudaEvent_t operator[](size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// What a launcher of the operators other than conv and linear reads (their
// values as the device layout stores them, device_layout.h).
struct NodeLaunch {
  const Node& n;
  const NodeQuant& q;
  int64_t batch;
  const float* image;          // the input node: the plan's float input
  const int8_t* x;             // the first input's value
  const int8_t* x2;            // the second input's (add)
  int8_t* y;                   // the output's
  ActShape in, out;            // per-sample shapes of the first input and the output
  int in_c, out_c;             // channels as stored (padded)
  int64_t out_bytes;           // per sample, as stored
  cudaStream_t stream;
};

// The CUDA runtime's launcher of each such operator (op_support.h lists what it runs).
struct OpLauncher {
  Op op;
  void (*launch)(const NodeLaunch& l);
};
const OpLauncher kLaunchers[] = {
    {Op::Input,
     [](const NodeLaunch& l) {
       cuda::quantize_input(l.image, l.batch, l.out.c, l.out.h, l.out.w, l.out_c, l.q.scale, l.y, l.stream);
     }},
    {Op::MaxPool2d,
     [](const NodeLaunch& l) {
       cuda::max_pool(l.x, l.batch, l.in.h, l.in.w, l.in_c, l.n.kernel, l.n.stride, l.y, l.stream);
     }},
    {Op::AvgPool2d,
     [](const NodeLaunch& l) {
       cuda::avg_pool(l.x, l.batch, l.in.h, l.in.w, l.in_c, l.n.kernel, l.n.stride, l.q.multiplier.data[0],
                      l.q.shift.data[0], l.y, l.stream);
     }},
    {Op::GlobalAvgPool,
     [](const NodeLaunch& l) {
       cuda::global_avg_pool(l.x, l.batch, l.in.h, l.in.w, l.in_c, l.q.multiplier.data[0], l.q.shift.data[0], l.y,
                             l.stream);
     }},
    {Op::Add,
     [](const NodeLaunch& l) {
       cuda::add(l.x, l.x2, l.batch * l.out_bytes, l.q.multiplier.data[0], l.q.multiplier.data[1], l.q.shift.data[0],
                 l.n.relu, l.y, l.stream);
     }},
    {Op::ShortcutA,
     [](const NodeLaunch& l) {
       cuda::shortcut_a(l.x, l.batch, l.in.h, l.in.w, l.in.c, l.in_c, l.n.channels, l.out_c, l.y, l.stream);
     }},
    {Op::ReLU, [](const NodeLaunch& l) { cuda::relu(l.x, l.batch * l.out_bytes, l.y, l.stream); }},
    {Op::Flatten, [](const NodeLaunch&) {}},  // its value is its input's bytes
};

const OpLauncher* launcher(Op op) {
  for (const OpLauncher& l : kLaunchers)
    if (l.op == op) return &l;
  return nullptr;
}

}  // namespace

struct CudaEngine::Impl {
  // Everything that depends on the batch size.
  struct Plan {
    int64_t batch = 0;
    bool retains_all = false;
    DeviceBuffer<float> input;  // NCHW floats
    DeviceBuffer<int32_t> logits;
    DeviceBuffer<int8_t> arena;    // every stored value, at offset[owner] (device_layout.h plan_arena)
    DeviceBuffer<int8_t> scratch;  // cuBLASLt path: im2col patches, then the int32 accumulators at acc_offset
    int64_t acc_offset = 0;
    std::vector<int64_t> offset;                       // per node that owns storage, else -1
    std::vector<std::unique_ptr<cuda::LtGemm>> gemms;  // per conv / linear on the cuBLASLt path
    std::vector<int> tiles;                            // per conv on the imma path: its tile configuration
    int64_t runs = 0;
    GraphExecOwner graph;  // captured on the second run (the first, direct one loads the kernels lazily)
  };

  Impl(const QuantizedModel& m, CudaBackend b, int d);
  ~Impl() {  // the members are freed on the engine's device, after its last work
    cudaSetDevice(device);
    if (stream) cudaStreamSynchronize(stream.get());
  }

  int output() const { return model.output(); }
  int classes() const { return model.num_classes(); }
  cuda::ConvShape conv_shape(int node, int64_t batch) const;
  cuda::igemm::Problem imma_problem(int node, int64_t batch) const;
  std::string imma_unsupported(int node, int64_t batch) const;
  int tuned_tile(const Plan& p, int node);
  double time_imma(const Plan& p, int node, int tile) const;
  bool uses_imma(int node) const { return backend == CudaBackend::Imma && model.graph.nodes[node].op == Op::Conv2d; }
  // The global average pool of a fused network tail, or -1 (not when every node's value is retained).
  int fused_pool(const Plan& p) const { return p.retains_all ? -1 : tail_pool; }
  void enqueue_tail(const Plan& p) const;
  std::string unsupported(int node, int64_t batch) const;
  std::string where(int node) const;
  cuda::RequantEpilogue epilogue(const Plan& p, int node) const;
  int8_t* value(const Plan& p, int node) const { return p.arena.get() + p.offset[values.owner[node]]; }
  const cuda::Storage& storage(int node) const { return values.storage[node]; }
  Plan& plan(int64_t batch);
  std::unique_ptr<Plan> make_plan(int64_t batch);
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream.get())); }
  void enqueue_node(const Plan& p, int node) const;
  void enqueue_weighted(const Plan& p, int node) const;
  void launch(Plan& p);
  double macs(int node, int64_t batch) const;

  int device;
  CudaBackend backend;
  QuantizedModel model;
  std::vector<ActShape> shapes;
  cuda::ValueLayout values;
  StreamOwner stream;
  LtOwner lt;
  DeviceBuffer<uint8_t> lt_workspace;
  std::vector<DeviceLayer> layers;  // per node; convs and linears only
  std::vector<int> imma_resident;   // cuda-imma: blocks of each tile per multiprocessor
  int multiprocessors = 0;
  bool tune_tiles = tile_tuning_enabled();
  cuda::igemm::TileTuner tuner;  // cuda-imma: the tile of each conv shape met so far
  // GlobalAvgPool -> Flatten -> output Linear, the pooled value read by
  // nothing else: the pool node, run with the logits in one kernel; or -1.
  int tail_pool = -1;
  cuda::PlanCache<int64_t, Plan> plans{kMaxPlans};
  bool retain = false;
  Plan* last_run = nullptr;
  std::mutex mutex;  // held by every public member of CudaEngine
};

CudaEngine::Impl::Impl(const QuantizedModel& m, CudaBackend b, int d) : device(d), backend(b), model(m) {
  const std::string unusable = device_unusable(device);
  check(unusable.empty(), std::string(backend_name(backend)) + ": no usable CUDA device: " + unusable);
  CUDA_CHECK(cudaSetDevice(device));
  model.validate();
  const Graph& g = model.graph;
  const std::string unsupported_node = cuda::why_graph_unsupported(g);
  check(unsupported_node.empty(), std::string(backend_name(backend)) + ": " + unsupported_node);
  shapes = g.shapes();
  const int n_nodes = static_cast<int>(g.nodes.size());

  values = cuda::plan_values(g, shapes, backend_name(backend), channel_alignment(backend));
  const std::vector<std::vector<int>> consumers = g.consumers();
  const Node& last = g.nodes[output()];
  if (last.op == Op::Linear && last.inputs.size() == 1 && g.nodes[last.inputs[0]].op == Op::Flatten) {
    const int flatten = last.inputs[0], pool = g.nodes[flatten].inputs[0];
    if (g.nodes[pool].op == Op::GlobalAvgPool && consumers[pool] == std::vector<int>{flatten} &&
        consumers[flatten] == std::vector<int>{output()})
      tail_pool = pool;
  }
  if (backend == CudaBackend::Imma) {
    imma_resident = cuda::conv2d_imma_prepare();
    CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  }

  StreamOwner::pointer s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream.reset(s);
  if (backend == CudaBackend::CublasLt) {
    cublasLtHandle_t handle = nullptr;
    CUBLAS_CHECK(cuda::cublaslt().create(&handle));
    lt.reset(handle);
    lt_workspace = DeviceBuffer<uint8_t>(kCublasLtWorkspace);
  }

  // Weights packed once (device_layout.h).
  layers.resize(n_nodes);
  for (int i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    if (n.op != Op::Conv2d && n.op != Op::Linear) continue;
    try {
      cuda::WeightPacking packing;  // the dp4a and cuBLASLt kernels read every stored channel
      if (uses_imma(i))
        packing = {cuda::igemm::tap_channels(shapes[n.inputs[0]].c), cuda::igemm::kDepthMultiple};
      layers[i] = DeviceLayer(cuda::pack_layer(model, shapes, values, i, packing));
    } catch (const Error& e) {
      fail(std::string(backend_name(backend)) + ": " + e.what());
    }
    const std::string why = unsupported(i, 1);  // rechecked for each batch size by make_plan
    check(why.empty(), where(i) + ": the kernel cannot run it: " + why);
  }
  // cudaMemcpy from pageable memory may return before its DMA ends, and the
  // engine's non-blocking stream does not wait for the legacy stream. Not the
  // whole device: that would break another engine's graph capture under way.
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

std::string CudaEngine::Impl::where(int node) const {
  const Node& n = model.graph.nodes[node];
  return std::string(backend_name(backend)) + ": node '" + n.name + "' (" + op_name(n.op) + ")";
}

cuda::igemm::Problem CudaEngine::Impl::imma_problem(int node, int64_t batch) const {
  const cuda::ConvShape s = conv_shape(node, batch);
  cuda::igemm::Problem p;
  p.batch = batch > INT32_MAX ? -1 : static_cast<int>(batch);  // refused by igemm::unsupported
  p.in_h = s.in_h, p.in_w = s.in_w, p.in_stride = s.in_c, p.tap_c = layers[node].tap_channels;
  p.out_h = s.out_h, p.out_w = s.out_w, p.out_c = s.out_c;
  p.kernel = s.kernel, p.stride = s.stride, p.padding = s.padding;
  return p;
}

// Why no cuda-imma tile can run the conv, or "" when one can.
std::string CudaEngine::Impl::imma_unsupported(int node, int64_t batch) const {
  const cuda::igemm::Problem p = imma_problem(node, batch);
  if (!cuda::igemm::tile_candidates(p, imma_resident.data(), multiprocessors).empty()) return "";
  std::string why_not = "no cuda-imma tile configuration can run it:";
  for (int i = 0; i < cuda::igemm::kTileCount; ++i) {
    const std::string why = imma_resident[i] > 0 ? cuda::igemm::unsupported(p, i) : "does not fit the device";
    why_not += std::string(" ") + cuda::igemm::tile_config(i).name + ": " + (why.empty() ? "not chosen" : why) + ";";
  }
  return why_not;
}

std::string CudaEngine::Impl::unsupported(int node, int64_t batch) const {
  const cuda::ConvShape s = conv_shape(node, batch);
  if (backend == CudaBackend::CublasLt) return cuda::LtGemm::unsupported(s.out_c, s.rows(), s.depth());
  if (uses_imma(node)) return imma_unsupported(node, batch);
  if (model.graph.nodes[node].op == Op::Conv2d) return cuda::conv2d_dp4a_unsupported(s);
  return cuda::linear_dp4a_unsupported(s.rows(), s.depth(), s.out_c);
}

cuda::ConvShape CudaEngine::Impl::conv_shape(int node, int64_t batch) const {
  const Node& n = model.graph.nodes[node];
  const ActShape x = shapes[n.inputs[0]], y = shapes[node];
  cuda::ConvShape s;
  s.batch = batch;
  s.out_c = layers[node].out_c;
  if (n.op == Op::Conv2d) {
    s.in_h = x.h, s.in_w = x.w, s.in_c = storage(n.inputs[0]).padded_c;
    s.out_h = y.h, s.out_w = y.w;
    s.kernel = n.kernel, s.stride = n.stride, s.padding = n.padding;
  } else {
    s.in_c = static_cast<int>(storage(n.inputs[0]).bytes());  // the whole stored vector, padding included
  }
  return s;
}

cuda::RequantEpilogue CudaEngine::Impl::epilogue(const Plan& p, int node) const {
  const Node& n = model.graph.nodes[node];
  const DeviceLayer& layer = layers[node];
  cuda::RequantEpilogue e;
  e.bias = layer.bias.get();
  e.multiplier = layer.multiplier.get();
  e.shift = layer.shift.get();
  e.relu = n.relu;
  if (n.inputs.size() == 2) {
    e.skip = value(p, n.inputs[1]);
    e.skip_multiplier = layer.skip_multiplier.get();
  }
  return e;
}

CudaEngine::Impl::Plan& CudaEngine::Impl::plan(int64_t batch) {
  if (Plan* found = plans.find(batch)) return *found;
  std::unique_ptr<Plan> made = make_plan(batch);
  if (const int64_t* victim = plans.victim()) {
    synchronize();  // its buffers may still be in use
    if (last_run && last_run->batch == *victim) last_run = nullptr;
  }
  return plans.insert(batch, std::move(made));
}

std::unique_ptr<CudaEngine::Impl::Plan> CudaEngine::Impl::make_plan(int64_t batch) {
  check(batch > 0, std::string(backend_name(backend)) + ": batch size must be positive, got " + std::to_string(batch));
  const Graph& g = model.graph;
  const int n_nodes = static_cast<int>(g.nodes.size());
  auto p = std::make_unique<Plan>();
  p->batch = batch;
  p->retains_all = retain;
  const cuda::ArenaPlan arena = cuda::plan_arena(g, values, batch, retain);
  p->offset = arena.offset;

  // cuBLASLt: the largest im2col matrix, then the largest int32 accumulator
  // block, and each layer's GEMM planned for this batch size.
  int64_t patch_bytes = 0, acc_bytes = 0;
  p->gemms.resize(n_nodes);
  p->tiles.assign(n_nodes, -1);
  for (int i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    if (n.op != Op::Conv2d && n.op != Op::Linear) continue;
    const std::string at = where(i) + " at batch " + std::to_string(batch);
    const std::string why = unsupported(i, batch);
    check(why.empty(), at + ": the kernel cannot run it: " + why);
    if (backend != CudaBackend::CublasLt) continue;
    const cuda::ConvShape s = conv_shape(i, batch);
    if (n.op == Op::Conv2d && !s.is_pointwise())
      patch_bytes = std::max(patch_bytes, cuda::round_up(s.rows() * s.depth(), cuda::kBufferAlignment));
    acc_bytes =
        std::max(acc_bytes, cuda::round_up(s.rows() * s.out_c * int64_t(sizeof(int32_t)), cuda::kBufferAlignment));
    try {
      p->gemms[i] = std::make_unique<cuda::LtGemm>(lt.get(), s.out_c, s.rows(), s.depth(), kCublasLtWorkspace);
    } catch (const Error& e) {
      fail(at + ": " + e.what());
    }
  }
  p->acc_offset = patch_bytes;

  const ActShape in = shapes[0];
  p->input = DeviceBuffer<float>(static_cast<size_t>(batch * in.numel()));
  p->logits = DeviceBuffer<int32_t>(static_cast<size_t>(batch * classes()));
  p->arena = DeviceBuffer<int8_t>(static_cast<size_t>(arena.bytes));
  p->scratch = DeviceBuffer<int8_t>(static_cast<size_t>(patch_bytes + acc_bytes));
  for (int i = 0; i < n_nodes; ++i)
    if (uses_imma(i)) p->tiles[i] = tuned_tile(*p, i);  // timed on this plan's buffers
  return p;
}

int CudaEngine::Impl::tuned_tile(const Plan& p, int node) {
  const cuda::igemm::Problem problem = imma_problem(node, p.batch);
  const std::vector<int> candidates = cuda::igemm::tile_candidates(problem, imma_resident.data(), multiprocessors);
  check(!candidates.empty(), where(node) + " at batch " + std::to_string(p.batch) + ": no tile can run it");
  if (!tune_tiles) return candidates.front();
  return tuner.choose(problem, candidates, [&](int tile) { return time_imma(p, node, tile); });
}

double CudaEngine::Impl::time_imma(const Plan& p, int node, int tile) const {
  const Node& n = model.graph.nodes[node];
  const auto launch = [&] {
    cuda::conv2d_imma(imma_problem(node, p.batch), tile, value(p, n.inputs[0]), layers[node].weights.get(),
                      epilogue(p, node), value(p, node), stream.get());
  };
  launch();  // loads the kernel; the arena holds any bytes: no branch of the kernel depends on them
  const Events events(2);
  double fastest = INFINITY;
  for (int run = 0; run < kTuningRuns; ++run) {
    CUDA_CHECK(cudaEventRecord(events[0], stream.get()));
    launch();
    CUDA_CHECK(cudaEventRecord(events[1], stream.get()));
    CUDA_CHECK(cudaEventSynchronize(events[1]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events[0], events[1]));
    fastest = std::min(fastest, double(ms));
  }
  return fastest;
}

void CudaEngine::Impl::enqueue_tail(const Plan& p) const {
  const int pool = tail_pool, x = model.graph.nodes[pool].inputs[0];
  const ActShape in = shapes[x];
  const NodeQuant& q = model.quant[pool];
  const DeviceLayer& layer = layers[output()];
  cuda::global_avg_pool_logits(value(p, x), p.batch, in.h, in.w, storage(x).padded_c, q.multiplier.data[0],
                               q.shift.data[0], layer.weights.get(), classes(), layer.bias.get(), p.logits.get(),
                               stream.get());
}

void CudaEngine::Impl::enqueue_weighted(const Plan& p, int node) const {
  const Node& n = model.graph.nodes[node];
  const DeviceLayer& layer = layers[node];
  const cuda::ConvShape s = conv_shape(node, p.batch);
  const int8_t* x = value(p, n.inputs[0]);
  const bool is_output = node == output();
  if (is_output && fused_pool(p) >= 0) return enqueue_tail(p);
  if (uses_imma(node)) {
    cuda::conv2d_imma(imma_problem(node, p.batch), p.tiles[node], x, layer.weights.get(), epilogue(p, node),
                      value(p, node), stream.get());
    return;
  }
  if (backend != CudaBackend::CublasLt) {  // dp4a; imma's linear layers too
    if (is_output)
      cuda::linear_dp4a_logits(x, layer.weights.get(), s.rows(), s.depth(), classes(), layer.bias.get(), p.logits.get(),
                               stream.get());
    else if (n.op == Op::Linear)
      cuda::linear_dp4a(x, layer.weights.get(), s.rows(), s.depth(), s.out_c, epilogue(p, node), value(p, node),
                        stream.get());
    else
      cuda::conv2d_dp4a(s, x, layer.weights.get(), epilogue(p, node), value(p, node), stream.get());
    return;
  }
  const int8_t* patches = x;  // a linear's or pointwise conv's input rows are its patches
  if (n.op == Op::Conv2d && !s.is_pointwise()) {
    cuda::im2col(s, x, p.scratch.get(), stream.get());
    patches = p.scratch.get();
  }
  int32_t* acc = reinterpret_cast<int32_t*>(p.scratch.get() + p.acc_offset);
  p.gemms[node]->run(layer.weights.get(), patches, acc, lt_workspace.get(), stream.get());
  if (is_output)
    cuda::logits_from_accumulators(acc, s.rows(), s.out_c, classes(), layer.bias.get(), p.logits.get(), stream.get());
  else
    cuda::requantize_accumulators(acc, s.rows(), s.out_c, epilogue(p, node), value(p, node), stream.get());
}

void CudaEngine::Impl::enqueue_node(const Plan& p, int node) const {
  const Node& n = model.graph.nodes[node];
  if (op_traits(n.op).weighted) return enqueue_weighted(p, node);
  if (node == fused_pool(p)) return;  // computed with the logits
  const OpLauncher* l = launcher(n.op);
  check(l != nullptr, where(node) + ": no launcher for its operator");
  const bool reads = !n.inputs.empty();
  const NodeLaunch args{n,
                        model.quant[node],
                        p.batch,
                        p.input.get(),
                        reads ? value(p, n.inputs[0]) : nullptr,
                        n.inputs.size() == 2 ? value(p, n.inputs[1]) : nullptr,
                        n.op == Op::Flatten ? nullptr : value(p, node),
                        reads ? shapes[n.inputs[0]] : ActShape{},
                        shapes[node],
                        reads ? storage(n.inputs[0]).padded_c : 0,
                        storage(node).padded_c,
                        storage(node).bytes(),
                        stream.get()};
  l->launch(args);
}

void CudaEngine::Impl::launch(Plan& p) {
  last_run = &p;
  if (p.runs++ == 0) {
    for (int i = 0; i <= output(); ++i) enqueue_node(p, i);
    return;
  }
  if (!p.graph) {
    CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i <= output(); ++i) enqueue_node(p, i);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream.get(), &broken);  // leaves the stream usable
      cudaGetLastError();  // the invalidated capture's error, which the next launch check would report
      GraphOwner discard(broken);
      throw;
    }
    cudaGraph_t captured = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream.get(), &captured));
    const GraphOwner graph(captured);
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, captured, 0));
    p.graph.reset(exec);
  }
  CUDA_CHECK(cudaGraphLaunch(p.graph.get(), stream.get()));
}

double CudaEngine::Impl::macs(int node, int64_t batch) const {
  return double(batch) * op_macs(model.graph.nodes[node], shapes, node);
}

const char* cuda_backend_name(CudaBackend backend) {
  switch (backend) {
    case CudaBackend::Imma: return "cuda-imma";
    case CudaBackend::Dp4a: return "cuda-dp4a";
    case CudaBackend::CublasLt: return "cuda-cublaslt";
  }
  return "cuda-unknown";
}

CudaEngine::CudaEngine(const QuantizedModel& model, CudaBackend backend, int device)
    : impl_(std::make_unique<Impl>(model, backend, device)) {}

CudaEngine::~CudaEngine() = default;

std::string CudaEngine::backend() const { return backend_name(impl_->backend); }

bool CudaEngine::device_available(std::string* why_not) {
  const std::string why = device_unusable(0);
  if (why_not) *why_not = why;
  return why.empty();
}

CudaBackend CudaEngine::default_backend(int device) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();  // no device: the engine made with the answer reports why
    return CudaBackend::Imma;
  }
  return major >= 8 ? CudaBackend::Imma : CudaBackend::Dp4a;
}

std::vector<CudaEngine::TileChoice> CudaEngine::imma_tile_choices() {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<TileChoice> out;
  for (const cuda::igemm::TunedShape& d : impl_->tuner.decided()) {
    TileChoice c{cuda::igemm::describe(d.problem), cuda::igemm::tile_config(d.tile).name, {}, d.tuning_milliseconds};
    for (const cuda::igemm::TileTrial& t : d.trials)
      c.trials.push_back({cuda::igemm::tile_config(t.tile).name, t.milliseconds});
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> CudaEngine::imma_kernel_info() {
  const std::string why = device_unusable(0);
  check(why.empty(), "cuda-imma kernel info: no usable CUDA device: " + why);
  CUDA_CHECK(cudaSetDevice(0));
  std::vector<std::string> out;
  for (int i = 0; i < cuda::igemm::kTileCount; ++i) out.push_back(cuda::conv2d_imma_kernel_info(i));
  return out;
}

std::string CudaEngine::device_description(int device) {
  const std::string why = device_unusable(device);
  if (!why.empty()) return "no usable CUDA device: " + why;
  cudaDeviceProp d{};
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaGetDeviceProperties(&d, device));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(d.totalGlobalMem) / (1 << 30));
  return std::string(d.name) + ", compute capability " + std::to_string(d.major) + "." + std::to_string(d.minor) +
         ", " + std::to_string(d.multiProcessorCount) + " multiprocessors, " + memory + ", " +
         std::to_string(d.l2CacheSize >> 20) + " MiB L2; driver " + version(driver) + ", runtime " + version(runtime);
}

Int32Tensor CudaEngine::run(const float* host_input, int64_t batch) {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);
  CUDA_CHECK(cudaSetDevice(m.device));
  Impl::Plan& p = m.plan(batch);
  CUDA_CHECK(cudaMemcpyAsync(p.input.get(), host_input, p.input.size() * sizeof(float), cudaMemcpyHostToDevice,
                             m.stream.get()));
  m.launch(p);
  Int32Tensor logits({batch, m.classes()});
  CUDA_CHECK(cudaMemcpyAsync(logits.ptr(), p.logits.get(), logits.data.size() * sizeof(int32_t), cudaMemcpyDeviceToHost,
                             m.stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(m.stream.get()));
  return logits;
}

float* CudaEngine::device_input(int64_t batch) {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  CUDA_CHECK(cudaSetDevice(impl_->device));
  return impl_->plan(batch).input.get();
}

int32_t* CudaEngine::device_logits(int64_t batch) {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  CUDA_CHECK(cudaSetDevice(impl_->device));
  return impl_->plan(batch).logits.get();
}

void CudaEngine::run_device(int64_t batch) {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->launch(impl_->plan(batch));
}

void CudaEngine::synchronize() {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->synchronize();
}

void CudaEngine::retain_node_outputs(bool retain) {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (retain == m.retain) return;
  CUDA_CHECK(cudaSetDevice(m.device));
  m.synchronize();  // the plans' buffers may still be in use
  m.retain = retain;
  m.last_run = nullptr;
  m.plans.clear();
}

std::vector<int8_t> CudaEngine::node_output(int node) {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);
  const std::string where = backend() + " node_output(" + std::to_string(node) + ")";
  check(node >= 0 && node < m.output(),
        where + ": not a node with an int8 output (the last node's int32 logits are what run() returns)");
  check(m.last_run != nullptr, where + ": nothing has run since the engine was made or its plans were dropped");
  check(m.last_run->retains_all, where +
                                     ": the last run reused buffers between layers; call "
                                     "retain_node_outputs(true) before running");
  CUDA_CHECK(cudaSetDevice(m.device));
  m.synchronize();
  const cuda::Storage& s = m.storage(node);
  const int64_t batch = m.last_run->batch;
  std::vector<int8_t> stored(static_cast<size_t>(batch * s.bytes()));
  CUDA_CHECK(cudaMemcpyAsync(stored.data(), m.value(*m.last_run, node), stored.size(), cudaMemcpyDeviceToHost,
                             m.stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(m.stream.get()));
  return cuda::strip_padding(stored, s, batch);
}

std::vector<CudaEngine::NodeTiming> CudaEngine::profile(int64_t batch, int iterations) {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);
  check(iterations > 0, backend() + " profile: iterations must be positive, got " + std::to_string(iterations));
  CUDA_CHECK(cudaSetDevice(m.device));
  Impl::Plan& p = m.plan(batch);
  const int n_nodes = m.output() + 1;
  for (int i = 0; i < n_nodes; ++i) m.enqueue_node(p, i);  // warm-up
  const Events events(static_cast<size_t>(n_nodes) + 1);
  std::vector<double> total(n_nodes, 0.0);
  for (int it = 0; it < iterations; ++it) {
    CUDA_CHECK(cudaEventRecord(events[0], m.stream.get()));
    for (int i = 0; i < n_nodes; ++i) {
      m.enqueue_node(p, i);
      CUDA_CHECK(cudaEventRecord(events[i + 1], m.stream.get()));
    }
    CUDA_CHECK(cudaEventSynchronize(events[n_nodes]));
    for (int i = 0; i < n_nodes; ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events[i], events[i + 1]));
      total[i] += ms;
    }
  }
  m.last_run = &p;
  std::vector<NodeTiming> out;
  for (int i = 0; i < n_nodes; ++i) {
    const Node& n = m.model.graph.nodes[i];
    const std::string kernel = m.uses_imma(i) ? cuda::igemm::tile_config(p.tiles[i]).name : "";
    out.push_back({n.name, op_name(n.op), kernel, m.macs(i, batch), total[i] / iterations});
  }
  return out;
}

}  // namespace octet
