// The registry of int8 backends (engine.h): the only place that maps a
// backend's name to its engine.
#include "common/error.h"
#include "runtime/cpu/cpu_engine.h"
#include "runtime/engine.h"
#ifdef OCTET_HAVE_CUDA
#include "runtime/cuda/cuda_engine.h"
#include "runtime/cuda/op_support.h"
#endif

namespace octet {

namespace {
std::string always_available() { return ""; }
std::string host_cpu() { return ""; }

#ifdef OCTET_HAVE_CUDA
std::string cuda_unavailable() {
  std::string why;
  return CudaEngine::device_available(&why) ? "" : "no usable CUDA device: " + why;
}
std::string cuda_device() { return CudaEngine::device_description(); }
template <CudaBackend kBackend>
std::string cuda_unsupported(const QuantizedModel& model) {
  return cuda::why_model_unsupported_on(cuda_backend_name(kBackend), model);
}
template <CudaBackend kBackend>
std::unique_ptr<Engine> make_cuda(const QuantizedModel& model) {
  return std::make_unique<CudaEngine>(model, kBackend);
}
#endif

const std::vector<EngineBackend> kBackends = {
    {backend_names::kCpu, always_available, CpuEngine::why_unsupported, host_cpu,
     [](const QuantizedModel& model) -> std::unique_ptr<Engine> { return std::make_unique<CpuEngine>(model); }},
#ifdef OCTET_HAVE_CUDA
    {backend_names::kCudaImma, cuda_unavailable, cuda_unsupported<CudaBackend::Imma>, cuda_device,
     make_cuda<CudaBackend::Imma>},
    {backend_names::kCudaDp4a, cuda_unavailable, cuda_unsupported<CudaBackend::Dp4a>, cuda_device,
     make_cuda<CudaBackend::Dp4a>},
    {backend_names::kCudaCublasLt, cuda_unavailable, cuda_unsupported<CudaBackend::CublasLt>, cuda_device,
     make_cuda<CudaBackend::CublasLt>},
#endif
};
}  // namespace

const std::vector<EngineBackend>& engine_backends() { return kBackends; }

std::vector<std::string> engine_backend_names() {
  std::vector<std::string> names;
  for (const EngineBackend& b : kBackends) names.push_back(b.name);
  return names;
}

const EngineBackend& engine_backend(const std::string& name) {
  std::string wanted = name;
#ifdef OCTET_HAVE_CUDA
  if (name == backend_names::kCudaDefault) wanted = cuda_backend_name(CudaEngine::default_backend());
#endif
  for (const EngineBackend& b : kBackends)
    if (wanted == b.name) return b;
  std::string known;
  for (const EngineBackend& b : kBackends) known += std::string(b.name) + ", ";
#ifdef OCTET_HAVE_CUDA
  known += backend_names::kCudaDefault;
#else
  if (name.rfind(backend_names::kCudaDefault, 0) == 0)
    fail("backend '" + name + "' is not available: this octet was built without CUDA");
  known.resize(known.size() - 2);
#endif
  fail("unknown backend '" + name + "' (known: " + known + ")");
}

std::unique_ptr<Engine> make_engine(const QuantizedModel& model, const std::string& backend) {
  const EngineBackend& b = engine_backend(backend);
  const std::string unavailable = b.why_unavailable();
  check(unavailable.empty(), std::string(b.name) + ": " + unavailable);
  const std::string unsupported = b.why_unsupported(model);
  check(unsupported.empty(), std::string(b.name) + " cannot run " + model.model + ": " + unsupported);
  return b.make(model);
}

}  // namespace octet
