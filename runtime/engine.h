// One interface over the runtime backends, so tools, benchmarks and the
// Python module can pick a backend by name: "cpu", "cuda-imma", "cuda-dp4a",
// "cuda-cublaslt", or "cuda": the default CUDA backend of the GPU (cuda-imma
// on compute capability 8.0+, which has int8 tensor cores; cuda-dp4a before).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

class Engine {
 public:
  virtual ~Engine() = default;
  // `input`: batch x C x H x W normalised float images in host memory.
  // Returns the int32 logits [batch][classes] in host memory.
  virtual Int32Tensor run(const float* input, int64_t batch) = 0;
  virtual std::string backend() const = 0;
};

// The backends this build has; "cpu" always, the CUDA ones (the default one
// first) when built with nvcc.
std::vector<std::string> engine_backends();
// Fails with a message naming the backend and why it cannot run here.
std::unique_ptr<Engine> make_engine(const QuantizedModel& model, const std::string& backend);

}  // namespace octet
