#include "runtime/engine.h"

#include "common/error.h"
#include "runtime/cpu/engine.h"

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

std::vector<std::string> engine_backends() { return {"cpu"}; }

std::unique_ptr<Engine> make_engine(const QuantizedModel& model, const std::string& backend) {
  if (backend == "cpu") return std::make_unique<CpuBackend>(model);
  if (backend == "cuda-dp4a" || backend == "cuda-cublaslt")
    fail("backend '" + backend + "' is not available: this octet was built without CUDA");
  fail("unknown backend '" + backend + "' (known: cpu, cuda-dp4a, cuda-cublaslt)");
}

}  // namespace octet
