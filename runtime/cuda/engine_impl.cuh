// The CUDA engine's internals (cuda_engine.h), shared by its translation
// units: cuda_engine.cu (making it, its public members), engine_plan.cu (the
// per-batch-size plans: buffers, cuBLASLt GEMMs, cuda-imma tiles) and
// engine_launch.cu (launching the nodes, capturing the CUDA graph).
#pragma once

#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "common/env_switch.h"
#include "graph/op.h"
#include "runtime/cuda/common.cuh"
#include "runtime/cuda/cuda_engine.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/gemm_cublaslt.cuh"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/patch_conv_kernel.h"
#include "runtime/cuda/plan_cache.h"
#include "runtime/cuda/programmatic_launch.cuh"
#include "runtime/cuda/stream_schedule.h"
#include "runtime/cuda/tile_tuner.h"

namespace octet {

namespace cuda {

inline constexpr size_t kCublasLtWorkspace = size_t{32} << 20;  // NVIDIA's recommendation for Hopper
// Timed launches per cuda-imma tile candidate (the fastest counts), after one untimed.
inline constexpr int kTuningRuns = 3;

// OCTET_IMMA_TUNE=0: take the cost model's tile instead of timing the
// candidates, and the grouped convs' default_row_pixels.
inline bool tile_tuning_enabled() {
  const char* v = std::getenv("OCTET_IMMA_TUNE");
  return !(v && std::string(v) == "0");
}

inline const char* backend_name(CudaBackend backend) { return cuda_backend_name(backend); }

inline int channel_alignment(CudaBackend backend) {
  return backend == CudaBackend::Imma ? igemm::kChannelAlignment : kDp4aChannelAlignment;
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
  explicit DeviceLayer(const PackedLayer& p)
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
std::string device_unusable(int device);

template <typename Handle, typename Status, Status (*Destroy)(Handle)>
struct Destroyer {
  void operator()(Handle h) const { Destroy(h); }
};
using StreamOwner =
    std::unique_ptr<std::remove_pointer_t<cudaStream_t>, Destroyer<cudaStream_t, cudaError_t, cudaStreamDestroy>>;
struct LtDestroyer {
  void operator()(cublasLtHandle_t h) const { cublaslt().destroy(h); }
};
using LtOwner = std::unique_ptr<std::remove_pointer_t<cublasLtHandle_t>, LtDestroyer>;
using GraphOwner =
    std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, Destroyer<cudaGraph_t, cudaError_t, cudaGraphDestroy>>;
using GraphExecOwner = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>,
                                       Destroyer<cudaGraphExec_t, cudaError_t, cudaGraphExecDestroy>>;

// Events destroyed with the object (for profile(), the tile timing and the
// side stream's fork and join; cudaEventDisableTiming for the latter).
class Events {
 public:
  explicit Events(size_t count, unsigned flags = cudaEventDefault) : events_(count, nullptr) {
    for (cudaEvent_t& e : events_) CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
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

}  // namespace cuda

using cuda::backend_name;
using cuda::channel_alignment;
using cuda::device_unusable;
using cuda::DeviceBuffer;
using cuda::DeviceLayer;
using cuda::Events;
using cuda::kCublasLtWorkspace;
using cuda::kTuningRuns;
using cuda::GraphExecOwner;
using cuda::GraphOwner;
using cuda::LtOwner;
using cuda::StreamOwner;

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
    std::vector<cuda::igemm::TileLaunch> launches;     // per conv on the imma path: its tile and split
    std::vector<int> row_pixels;                       // per grouped conv: its GroupedConvShape::pixels, timed
    bool patch_conv = false;  // patch_conv_node runs from the float image (patch_conv.cuh), timed
    cuda::StreamSchedule streams;          // the nodes run beside the main stream (none with retains_all)
    std::unique_ptr<Events> stream_events;  // per side node k: [2k] its fork, [2k + 1] its join
    int64_t runs = 0;
    GraphExecOwner graph;  // captured on the second run (the first, direct one loads the kernels lazily)
  };

  Impl(const QuantizedModel& m, CudaBackend b, int d);
  ~Impl() {  // the members are freed on the engine's device, after its last work
    cudaSetDevice(device);
    if (stream) cudaStreamSynchronize(stream.get());
    if (side_stream) cudaStreamSynchronize(side_stream.get());
  }

  int output() const { return model.output(); }
  int classes() const { return model.num_classes(); }
  cuda::ConvShape conv_shape(int node, int64_t batch) const;
  cuda::igemm::Problem imma_problem(int node, int64_t batch) const;
  std::string imma_unsupported(int node, int64_t batch) const;
  cuda::igemm::TileLaunch tuned_launch(const Plan& p, int node);
  // cuda-imma: `launch`'s split with the buffers of stream `on`.
  cuda::igemm::SplitK split_of(const cuda::igemm::TileLaunch& launch, cudaStream_t on) const;
  double time_imma(const Plan& p, int node, const cuda::igemm::TileLaunch& launch) const;
  // The fastest of kTuningRuns launches, in milliseconds.
  double time_launches(const std::function<void()>& launch) const;
  // Each launch's fastest time_launches over TileTuner::kRounds rounds in which
  // every launch runs in turn (so that clocks still rising favour none).
  std::vector<double> fastest_of_rounds(const std::vector<std::function<void()>>& launches) const;
  bool uses_imma(int node) const {
    const Node& n = model.graph.nodes[node];
    return backend == CudaBackend::Imma && n.op == Op::Conv2d && !uses_grouped(node);
  }
  // A grouped, depthwise or dilated conv: conv2d_grouped.cuh, on every backend.
  bool uses_grouped(int node) const { return cuda::runs_grouped_kernel(model.graph.nodes[node]); }
  cuda::GroupedConvShape grouped_shape(int node, int64_t batch) const {
    cuda::GroupedConvShape s = cuda::grouped_conv_shape(model.graph, shapes, values, node, batch);
    s.unsigned_input = stored_unsigned(model.graph.nodes[node].inputs[0]);
    return s;
  }
  // As the plan runs it: with the pixels a thread that the plan chose.
  cuda::GroupedConvShape grouped_shape(const Plan& p, int node) const {
    cuda::GroupedConvShape s = grouped_shape(node, p.batch);
    s.pixels = p.row_pixels[node];
    return s;
  }
  int tuned_row_pixels(const Plan& p, int node) const;
  // The image the patch conv reads, whose own node then launches nothing.
  int patch_conv_input() const { return model.graph.nodes[patch_conv_node].inputs[0]; }
  bool runs_patch_conv(const Plan& p, int node) const { return p.patch_conv && node == patch_conv_node; }
  bool read_by_patch_conv(const Plan& p, int node) const { return p.patch_conv && node == patch_conv_input(); }
  cuda::PatchConvShape patch_conv_shape(int64_t batch) const;
  void enqueue_patch_conv(const Plan& p, cudaStream_t on) const;
  bool tuned_patch_conv(const Plan& p) const;
  // Whether the node's value is stored as uint8 (cuda/stored_value.h).
  bool stored_unsigned(int node) const { return cuda::stored_unsigned(model.quant[node].zero_point); }
  // How a conv reads the node's value (cuda/stored_value.h).
  cuda::StoredInput stored_input(int node) const {
    return model.quant[node].bits > 8 ? cuda::StoredInput::kWide
           : stored_unsigned(node)    ? cuda::StoredInput::kUnsigned
                                      : cuda::StoredInput::kSigned;
  }
  // The global average pool of a fused network tail, or -1 (not when every node's value is retained).
  int fused_pool(const Plan& p) const { return p.retains_all ? -1 : tail_pool; }
  void enqueue_tail(const Plan& p, cudaStream_t on) const;
  std::string unsupported(int node, int64_t batch) const;
  std::string where(int node) const;
  RequantEpilogue epilogue(const Plan& p, int node) const;
  int8_t* value(const Plan& p, int node) const { return p.arena.get() + p.offset[values.owner[node]]; }
  // The activation or PRelu that a conv's or linear's epilogue computes in
  // this plan (device_layout.h ValueLayout::fused_activation), or -1.
  int fused_activation(const Plan& p, int node) const { return p.retains_all ? -1 : values.fused_activation[node]; }
  // Whether the node is such an activation, computed by the layer before it.
  bool computed_by_layer(const Plan& p, int node) const {
    const Node& n = model.graph.nodes[node];
    return (n.op == Op::Activation || n.op == Op::PRelu) && fused_activation(p, n.inputs[0]) == node;
  }
  // The buffer a conv or linear writes: its fused activation's value, else its own.
  int8_t* layer_output(const Plan& p, int node) const {
    const int activation = fused_activation(p, node);
    return value(p, activation >= 0 ? activation : node);
  }
  const cuda::Storage& storage(int node) const { return values.storage[node]; }
  Plan& plan(int64_t batch);
  std::unique_ptr<Plan> make_plan(int64_t batch);
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream.get())); }
  // Node `node`'s launches, on stream `on`.
  void enqueue_node(const Plan& p, int node, cudaStream_t on) const;
  void enqueue_weighted(const Plan& p, int node, cudaStream_t on) const;
  // Every node, each on its stream (Plan::streams); the main stream waits for the side one.
  void enqueue_network(const Plan& p) const;
  // Per node: whether it may run beside the main stream (stream_schedule.h):
  // a conv that is not the output, uses no scratch buffer (not cuBLASLt's
  // GEMM) and is not the patch conv.
  std::vector<bool> may_run_beside() const;
  void launch(Plan& p);
  double macs(int node, int64_t batch) const;

  int device;
  CudaBackend backend;
  QuantizedModel model;
  std::vector<ActShape> shapes;
  cuda::ValueLayout values;
  StreamOwner stream;
  // stream_schedule.h; used with OCTET_SIDE_STREAM=1 (off by default until a GPU has run it: docs/gpu.md)
  StreamOwner side_stream;
  bool side_stream_on = env_switch("OCTET_SIDE_STREAM").value_or(false);
  // Every kernel after the first (but cuBLASLt's GEMMs) launched to start beside the kernel before it
  // (programmatic_launch.cuh; OCTET_PDL=1): how they go to stream `on`.
  bool programmatic_launches = false;
  cuda::KernelStream launching(cudaStream_t on) const { return {on, programmatic_launches}; }
  // cuda-imma: K split among several blocks where a conv has few output tiles (implicit_gemm.h
  // split_slices); with OCTET_SPLIT_K=1 (off by default until a GPU has run it: docs/gpu.md).
  bool split_k = env_switch("OCTET_SPLIT_K").value_or(false);
  // Its sums and counts, of the main stream's convs and the side's, sized for any conv
  // (igemm::split_partial_bytes_at_most); made with split_k.
  struct SplitBuffers {
    DeviceBuffer<int32_t> partials;
    DeviceBuffer<uint32_t> arrivals;  // zeros
  } split_buffers[2];
  LtOwner lt;
  DeviceBuffer<uint8_t> lt_workspace;
  std::vector<DeviceLayer> layers;  // per node; convs and linears only
  std::vector<DeviceBuffer<int8_t>> tables;  // per node; activations: their 256 output levels, PRelu: 256 per channel
  // Per node; local response norms: m(S) by S; group norms: their affine (device_layout.h group_norm_affine).
  std::vector<DeviceBuffer<double>> multipliers;
  std::vector<int> imma_resident;   // cuda-imma: blocks of each tile per multiprocessor
  int multiprocessors = 0;
  bool tune_tiles = cuda::tile_tuning_enabled();
  cuda::igemm::TileTuner tuner;  // cuda-imma: the tile of each conv shape met so far
  // GlobalAvgPool -> Flatten -> output Linear, the pooled value read by
  // nothing else: the pool node, run with the logits in one kernel; or -1.
  int tail_pool = -1;
  // cuda-imma: the conv that may run straight from the float image (patch_conv.cuh): the only
  // reader of a patches-folded image, 8-bit output and residual; or -1.
  int patch_conv_node = -1;
  cuda::PlanCache<int64_t, Plan> plans{kMaxPlans};
  bool retain = false;
  Plan* last_run = nullptr;
  std::mutex mutex;  // held by every public member of CudaEngine
};

}  // namespace octet
