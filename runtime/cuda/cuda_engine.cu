#include "runtime/cuda/cuda_engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/engine_impl.cuh"
#include "runtime/cuda/op_support.h"

namespace octet {

namespace cuda {

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

}  // namespace cuda

CudaEngine::Impl::Impl(const QuantizedModel& m, CudaBackend b, int d) : device(d), backend(b), model(m) {
  const std::string unusable = device_unusable(device);
  check(unusable.empty(), std::string(backend_name(backend)) + ": no usable CUDA device: " + unusable);
  CUDA_CHECK(cudaSetDevice(device));
  model.validate();
  const Graph& g = model.graph;
  const std::string unsupported_node = cuda::why_model_unsupported_on(backend_name(backend), model);
  check(unsupported_node.empty(), std::string(backend_name(backend)) + ": " + unsupported_node);
  shapes = g.shapes();
  const int n_nodes = static_cast<int>(g.nodes.size());

  values = cuda::plan_model_values(model, shapes, backend_name(backend), channel_alignment(backend));
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
    for (int i = 0; i < n_nodes; ++i) {
      const Node& n = g.nodes[i];
      if (n.op != Op::Conv2d || !uses_imma(i) || i == output()) continue;
      const int x = n.inputs[0];
      const bool narrow_skip = n.inputs.size() == 1 || model.quant[n.inputs[1]].bits == 8;
      if (values.storage[x].fold.kind == cuda::ImageFold::kPatches && consumers[x] == std::vector<int>{i} &&
          model.quant[i].bits == 8 && narrow_skip)
        patch_conv_node = i;
    }
  }

  programmatic_launches = cuda::programmatic_launch_offered();
  for (StreamOwner* owner : {&stream, &side_stream}) {
    StreamOwner::pointer s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    owner->reset(s);
  }
  if (backend == CudaBackend::CublasLt) {
    cublasLtHandle_t handle = nullptr;
    CUBLAS_CHECK(cuda::cublaslt().create(&handle));
    lt.reset(handle);
    lt_workspace = DeviceBuffer<uint8_t>(kCublasLtWorkspace);
  }

  // Activation and PRelu tables and local response norms' multipliers, made once from the scales as the CPU
  // runtime makes them.
  tables.resize(n_nodes);
  multipliers.resize(n_nodes);
  for (int i = 0; i < n_nodes; ++i) {
    if (g.nodes[i].op == Op::Activation || g.nodes[i].op == Op::PRelu)
      tables[i] = cuda::upload(cuda::stored_tables(model, i));
    if (g.nodes[i].op == Op::LocalResponseNorm)
      multipliers[i] = cuda::upload(ops::local_response_multipliers(cuda::local_response_levels(model, i)));
    if (g.nodes[i].op == Op::GroupNorm) multipliers[i] = cuda::upload(cuda::group_norm_affine(model, i));
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
      layers[i] = DeviceLayer(uses_grouped(i) ? cuda::pack_grouped_layer(model, shapes, values, i)
                                              : cuda::pack_layer(model, shapes, values, i, packing));
    } catch (const Error& e) {
      fail(std::string(backend_name(backend)) + ": " + e.what());
    }
    const std::string why = unsupported(i, 1);  // rechecked for each batch size by make_plan
    check(why.empty(), where(i) + ": the kernel cannot run it: " + why);
  }
  if (backend == CudaBackend::Imma && split_k)
    for (SplitBuffers& b : split_buffers) {  // one for each stream, shared by the plans (they run in turn)
      b.partials = DeviceBuffer<int32_t>(size_t(cuda::igemm::split_partial_bytes_at_most(multiprocessors) / 4));
      b.arrivals = DeviceBuffer<uint32_t>(size_t(cuda::igemm::split_arrival_bytes_at_most(multiprocessors) / 4));
      CUDA_CHECK(cudaMemset(b.arrivals.get(), 0, b.arrivals.size() * sizeof(uint32_t)));
    }
  // The copies and the zeroing above ran on the legacy stream (cudaMemcpy from pageable memory
  // may return before its DMA ends), which the engine's non-blocking streams do not wait for. Not the
  // whole device: that would break another engine's graph capture under way.
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

std::string CudaEngine::Impl::where(int node) const {
  const Node& n = model.graph.nodes[node];
  return std::string(backend_name(backend)) + ": node '" + n.name + "' (" + op_name(n.op) + ")";
}


const char* cuda_backend_name(CudaBackend backend) {
  switch (backend) {
    case CudaBackend::Imma: return backend_names::kCudaImma;
    case CudaBackend::Dp4a: return backend_names::kCudaDp4a;
    case CudaBackend::CublasLt: return backend_names::kCudaCublasLt;
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

Int32Tensor CudaEngine::run(const float* host_input, int64_t batch, const Hook& hook) const {
  if (hook) return run_retaining(host_input, batch, hook);
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

// Every node keeps its own buffer for the run, read back for the hook; the
// buffer-reusing plans come back afterwards (made again on their next run).
Int32Tensor CudaEngine::run_retaining(const float* host_input, int64_t batch, const Hook& hook) const {
  CudaEngine& self = const_cast<CudaEngine&>(*this);  // the plans are a cache; what a run computes stays the same
  const bool retained = impl_->retain;
  self.retain_node_outputs(true);
  Int32Tensor logits = run(host_input, batch);
  for (int i = 0; i < impl_->output(); ++i) {
    const std::vector<int8_t> values = self.node_output(i);
    hook(i, values.data(), static_cast<int64_t>(values.size()) / impl_->model.value_bytes(i));
  }
  self.retain_node_outputs(retained);
  return logits;
}

const QuantizedModel& CudaEngine::model() const { return impl_->model; }

std::vector<double> CudaEngine::time_runs(const float* input, int64_t batch, int warmup, int iterations) {
  check(iterations > 0 && warmup >= 0, backend() + " timing: iterations must be positive, warm-up runs non-negative");
  // The engine's stream does not wait for this copy (see run_device).
  CUDA_CHECK(cudaMemcpy(device_input(batch), input, sizeof(float) * batch * impl_->shapes[0].numel(),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run_device(batch);
    synchronize();
    if (i >= warmup)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return ms;
}

std::vector<Engine::TimedChoice> CudaEngine::timed_choices() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<TimedChoice> out;
  for (const cuda::igemm::TunedShape& d : impl_->tuner.decided()) {
    TimedChoice c{cuda::igemm::describe(d.problem), cuda::igemm::launch_name(d.launch), {}, d.tuning_milliseconds};
    for (const cuda::igemm::TileTrial& t : d.trials)
      c.trials.push_back({cuda::igemm::launch_name(t.launch), t.milliseconds});
    out.push_back(c);
  }
  return out;
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
  if (s.planes == 1) return cuda::strip_padding(stored, s, batch, m.model.quant[node].zero_point);
  const std::vector<int16_t> wide = cuda::strip_wide_padding(stored, s, batch);
  const auto* bytes = reinterpret_cast<const int8_t*>(wide.data());
  return std::vector<int8_t>(bytes, bytes + 2 * wide.size());
}

std::vector<Engine::NodeTiming> CudaEngine::profile(const float* input, int64_t batch, int warmup, int iterations) {
  Impl& m = *impl_;
  check(iterations > 0 && warmup >= 0, backend() + " profile: iterations must be positive, warm-up runs non-negative");
  CUDA_CHECK(cudaMemcpy(device_input(batch), input, sizeof(float) * batch * m.shapes[0].numel(),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::lock_guard<std::mutex> lock(m.mutex);
  CUDA_CHECK(cudaSetDevice(m.device));
  Impl::Plan& p = m.plan(batch);
  const int n_nodes = m.output() + 1;
  for (int w = 0; w < std::max(warmup, 1); ++w)  // at least once: the first launches load the kernels
    for (int i = 0; i < n_nodes; ++i) m.enqueue_node(p, i, m.stream.get());
  const Events events(static_cast<size_t>(n_nodes) + 1);
  std::vector<double> total(n_nodes, 0.0);
  for (int it = 0; it < iterations; ++it) {
    CUDA_CHECK(cudaEventRecord(events[0], m.stream.get()));
    for (int i = 0; i < n_nodes; ++i) {
      m.enqueue_node(p, i, m.stream.get());
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
    std::string kernel;
    if (m.uses_imma(i))
      kernel = cuda::igemm::launch_name(p.launches[i]);
    else if (m.uses_grouped(i))
      kernel = m.grouped_shape(p, i).row_pixels() > 1 ? "grouped-rows" : "grouped-direct";
    else if (m.computed_by_layer(p, i))
      kernel = "in-layer-epilogue";  // its table applied by the conv or linear before it
    else if (m.read_by_patch_conv(p, i))
      kernel = "in-patch-conv";  // quantized by the conv that reads it
    if (m.runs_patch_conv(p, i)) kernel = "patch-conv";
    out.push_back({n.name, op_name(n.op), kernel, m.macs(i, batch), total[i] / iterations});
  }
  return out;
}


}  // namespace octet
