#include "runtime/engine.h"

#include "common/error.h"
#include "runtime/cpu/engine.h"
#ifdef OCTET_HAVE_CUDA
#include "runtime/cuda/cuda_engine.h"
#endif

namespace octet {

namespace {
class CpuBackend : public Engine {
 public:
  explicit CpuBackend(const QuantizedModel& model) : engine_(model) {}
  Int32Tensor run(const float* input, int64_t batch) override { return engine_.run(input, batch); }
  std::string backend() const override { return "cpu"; }

 private:
  CpuEngine engine_;
};
}  // namespace

std::vector<std::string> engine_backends() {
#ifdef OCTET_HAVE_CUDA
  return {"cpu", "cuda-imma", "cuda-dp4a", "cuda-cublaslt"};
#else
  return {"cpu"};
#endif
}

std::unique_ptr<Engine> make_engine(const QuantizedModel& model, const std::string& backend) {
  if (backend == "cpu") return std::make_unique<CpuBackend>(model);
#ifdef OCTET_HAVE_CUDA
  if (backend == "cuda") return std::make_unique<CudaEngine>(model, CudaEngine::default_backend());
  for (const CudaBackend b : {CudaBackend::Imma, CudaBackend::Dp4a, CudaBackend::CublasLt})
    if (backend == cuda_backend_name(b)) return std::make_unique<CudaEngine>(model, b);
#else
  if (backend.rfind("cuda", 0) == 0)
    fail("backend '" + backend + "' is not available: this octet was built without CUDA");
#endif
  fail("unknown backend '" + backend + "' (known: cpu, cuda, cuda-imma, cuda-dp4a, cuda-cublaslt)");
}

}  // namespace octet
