// One contract for every int8 backend, and one registry that names them
// (backend_registry.cpp, where each backend's name is spelled): the tools,
// evaluate/, the benchmarks and the Python module hold an Engine and never a
// concrete one. Backends: "cpu" (runtime/cpu/cpu_engine.h) and, when built
// with nvcc, "cuda-imma", "cuda-dp4a" and "cuda-cublaslt"
// (runtime/cuda/cuda_engine.h); "cuda" names the GPU's default one.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

// The backends' names, spelled here only.
namespace backend_names {
inline constexpr char kCpu[] = "cpu";
inline constexpr char kCudaImma[] = "cuda-imma";
inline constexpr char kCudaDp4a[] = "cuda-dp4a";
inline constexpr char kCudaCublasLt[] = "cuda-cublaslt";
inline constexpr char kCudaDefault[] = "cuda";  // the GPU's default CUDA backend
}  // namespace backend_names

class Engine {
 public:
  virtual ~Engine() = default;

  // Sees node `node`'s int8 output after it ran (NHWC without channel
  // padding, `count` values for the whole batch), for every node but the
  // outputs, whose int32 logits run() and run_outputs() return. A wide node's values
  // (QuantizedModel::value_bytes 2) are int16: `values` points at their bytes.
  using Hook = std::function<void(int node, const int8_t* values, int64_t count)>;

  // `input`: batch x C x H x W normalised float images in host memory.
  // Returns the int32 logits in host memory: [batch][classes], or
  // [batch][H][W][classes] from a model returning an image of them (logits_shape). With a hook a
  // backend may run more slowly (CUDA keeps every value, then copies it).
  virtual Int32Tensor run(const float* input, int64_t batch, const Hook& hook = {}) const = 0;
  // Every output's logits, in the model's order (Graph::outputs; run returns the last's). The hook
  // sees no output. Backends that refuse models of several outputs return run's alone.
  virtual std::vector<Int32Tensor> run_outputs(const float* input, int64_t batch, const Hook& hook = {}) const;

  virtual std::string backend() const = 0;  // its registry name
  virtual const QuantizedModel& model() const = 0;

  // Wall-clock milliseconds of each of `iterations` runs of `input` after
  // `warmup` untimed ones, the backend's fastest way (CUDA: the input already
  // on the device, the logits left there, from its CUDA graph).
  virtual std::vector<double> time_runs(const float* input, int64_t batch, int warmup, int iterations) = 0;

  struct NodeTiming {
    std::string name, op;
    std::string kernel;  // the kernel that ran it ("" where the backend does not say)
    double macs;         // multiply-adds of the batch
    double milliseconds;
  };
  // Per node, its time in a run of `input` (the backend's per-node way: CPU
  // from the hook's timestamps, CUDA launched one node at a time), the mean
  // or median over `iterations` after `warmup` runs.
  virtual std::vector<NodeTiming> profile(const float* input, int64_t batch, int warmup, int iterations) = 0;

  // A choice the backend made by timing (cuda-imma: the tile of each
  // convolution shape), for reports; other backends make none.
  struct TimedChoice {
    std::string problem;  // e.g. the convolution's shape
    std::string chosen;
    std::vector<std::pair<std::string, double>> trials;  // (candidate, milliseconds)
    double tuning_milliseconds = 0;                      // what the timing cost
  };
  virtual std::vector<TimedChoice> timed_choices() const { return {}; }

  // Logits as floats: acc * logit_scale[class], of the last output or of output `node`.
  FloatTensor dequantize_logits(const Int32Tensor& logits) const;
  FloatTensor dequantize_logits(const Int32Tensor& logits, int node) const;
};

// A backend of the registry.
struct EngineBackend {
  const char* name;
  // "" where it can run on this machine, else why not (no GPU, say).
  std::string (*why_unavailable)();
  // "" when it has a kernel for every node of `model`, else "why, at node 'x' (op)" of the first it cannot run.
  std::string (*why_unsupported)(const QuantizedModel& model);
  // The machine it runs on, for benchmark reports ("" for the host CPU, which the tools describe).
  std::string (*device)();
  std::unique_ptr<Engine> (*make)(const QuantizedModel& model);
};

// The backends this build has: "cpu" first, then the CUDA ones (default first).
const std::vector<EngineBackend>& engine_backends();
std::vector<std::string> engine_backend_names();
// The entry of `name` ("cuda": the GPU's default CUDA backend); fails naming
// the known ones, or saying the build has no CUDA.
const EngineBackend& engine_backend(const std::string& name);
// Fails with a message naming the backend and why it cannot run here or
// cannot run the model.
std::unique_ptr<Engine> make_engine(const QuantizedModel& model, const std::string& backend);

}  // namespace octet
