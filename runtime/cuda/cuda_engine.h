// The CUDA int8 runtime: executes a quantized model on one GPU, bit for bit
// like the CPU runtime. Plain C++ (no CUDA headers), so any file can include it.
//
// Activations live on the device as NHWC int8 with channels padded to a
// multiple of the backend's alignment (16 for cuda-imma, 4 otherwise);
// weights are packed once at load. For each batch size the engine plans one
// arena in which layers reuse the buffers of values no later layer reads.
// The first run of a batch size launches the kernels one by one (loading
// them), the second captures the whole network into a CUDA graph, and every
// run from then on replays it. Everything runs on the engine's stream, but
// for convs whose inputs are ready some nodes early (ResNet's projection
// shortcuts, Inception's branches), which run from there on a second stream
// beside it with OCTET_SIDE_STREAM=1 (stream_schedule.h; off by default until
// a GPU session has run it).
// The plans (buffers and graph) of the kMaxPlans most recently used batch
// sizes are kept; running another batch size drops the least recently used.
//
// Backends: "cuda-imma" (sm_80+: implicit-GEMM conv on int8 tensor cores,
// mma.sync.m16n8k32, requantizing epilogue fused; the default where it
// runs; each conv shape runs the fastest of its candidate tile
// configurations, timed when the first plan that meets the shape is made),
// "cuda-dp4a" (hand-written __dp4a kernels: implicit-GEMM conv and a GEMM for
// linear layers, epilogues fused) and "cuda-cublaslt" (int8 im2col +
// cuBLASLt int8 GEMM with int32 output, then a requantizing epilogue kernel).
// Linear layers of cuda-imma use the dp4a GEMM. Pooling, add, ReLU, shortcut
// and input quantization are shared; a network ending in global average pool,
// flatten and the output linear runs its tail as one kernel (except while
// retain_node_outputs is on, so that the pooled values can be read).
//
// Threads: every public member locks the engine, so one engine may be used
// from several threads; their runs are serialised. Pointers returned by
// device_input / device_logits stay valid until the plan of their batch size
// is dropped (kMaxPlans other batch sizes run since) or retain_node_outputs
// changes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/engine.h"

namespace octet {

enum class CudaBackend { Imma, Dp4a, CublasLt };
const char* cuda_backend_name(CudaBackend backend);  // "cuda-imma", "cuda-dp4a", "cuda-cublaslt"

class CudaEngine : public Engine {
 public:
  // Uploads and packs the weights; fails naming the node when a kernel path
  // cannot handle a layer, or when there is no usable device.
  CudaEngine(const QuantizedModel& model, CudaBackend backend, int device = 0);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  // Synchronous: `host_input` is batch x C x H x W normalised floats; returns
  // the int32 logits [batch][classes]. With a hook, the run keeps every
  // node's value in a buffer of its own (retain_node_outputs) and reads it
  // back; the buffer-reusing plans are made again on the next run.
  Int32Tensor run(const float* host_input, int64_t batch, const Hook& hook = {}) const override;
  std::string backend() const override;  // cuda_backend_name()
  const QuantizedModel& model() const override;
  // run_device's time, the input copied to the device once before.
  std::vector<double> time_runs(const float* input, int64_t batch, int warmup, int iterations) override;
  // Per node, CUDA events around each node's launches (launched one node at
  // a time, not from the graph), the mean of `iterations` runs; convs of
  // cuda-imma name their tile configuration.
  std::vector<NodeTiming> profile(const float* input, int64_t batch, int warmup, int iterations) override;
  // cuda-imma: every convolution shape met so far, with the milliseconds of
  // each candidate tile (timed when the plan of a batch size is made; none
  // when only one tile can run the shape) and the tile chosen, the fastest.
  // Empty on the other backends, and with OCTET_IMMA_TUNE=0 (the cost
  // model's tile, untimed).
  std::vector<TimedChoice> timed_choices() const override;

  // Per-batch-size plans kept at once (least recently used dropped first).
  static constexpr size_t kMaxPlans = 4;

  // Device-resident path for benchmarks: the input already on the device, the
  // logits left there. Asynchronous on the engine's stream; from the second
  // run of a batch size on, from the CUDA graph captured for it. The stream
  // is non-blocking: a copy into device_input must have completed before
  // run_device (e.g. cudaMemcpy followed by cudaDeviceSynchronize).
  float* device_input(int64_t batch);     // batch x C x H x W floats, engine-owned
  int32_t* device_logits(int64_t batch);  // [batch][classes], engine-owned
  void run_device(int64_t batch);         // reads device_input(batch), writes device_logits(batch)
  void synchronize();

  // For tests. While on, the memory plan gives every node a buffer of its own
  // (no reuse), so node_output can read any node after a run; changing it
  // drops the plans made so far.
  void retain_node_outputs(bool retain);
  // Node i's int8 output of the last run, NHWC without channel padding (the
  // CPU runtime's layout and bytes; a wide node's int16 values as bytes).
  // Needs retain_node_outputs(true) before that run.
  std::vector<int8_t> node_output(int node);

  // False, with the reason, when there is no usable GPU.
  static bool device_available(std::string* why_not);
  // The backend to use on `device` when none is named: cuda-imma on compute
  // capability 8.0 and newer (int8 tensor cores), cuda-dp4a before.
  static CudaBackend default_backend(int device = 0);
  // Registers, shared and local memory of each cuda-imma kernel on device 0.
  static std::vector<std::string> imma_kernel_info();
  // `device` as benchmark reports name it: its name, compute capability,
  // multiprocessors, memory and L2, and the driver and runtime versions
  // (e.g. "NVIDIA H100 80GB HBM3, compute capability 9.0, 132
  // multiprocessors, 79.2 GiB, 50 MiB L2; driver 13.0, runtime 13.0"); the
  // reason when it is not usable.
  static std::string device_description(int device = 0);

 private:
  Int32Tensor run_retaining(const float* host_input, int64_t batch, const Hook& hook) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace octet
