// The CPU integer runtime: executes a quantized model with int8 activations,
// int32 accumulation and runtime/requantize.h, using all cores (OpenMP).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "qmodel/quantized_model.h"
#include "runtime/cpu/kernels.h"

namespace octet {

class CpuEngine {
 public:
  explicit CpuEngine(const QuantizedModel& model);  // packs the weights once

  // Sees every node's int8 output (NHWC, `count` values) except the logits.
  using Hook = std::function<void(int node, const int8_t* values, int64_t count)>;

  // `input`: batch x C x H x W normalised float images. Returns the int32
  // logits [batch][classes]. Threads: run and dequantize_logits may be called
  // from several threads at once on one engine, and each run gives the bits it
  // gives alone (tests/test_engine_threads.cpp); the activation buffers of a
  // finished run are kept for the next one.
  Int32Tensor run(const float* input, int64_t batch, const Hook& hook = {}) const;

  // Logits as floats: acc * logit_scale[class].
  FloatTensor dequantize_logits(const Int32Tensor& logits) const;

  const QuantizedModel& model() const { return model_; }
  const std::vector<ActShape>& shapes() const { return shapes_; }

 private:
  cpu::ConvGeometry geometry(int node, int64_t batch) const;

  QuantizedModel model_;
  std::vector<ActShape> shapes_;
  std::vector<cpu::PackedWeights> weights_;  // per node (convs and linears)
  std::vector<int> last_use_;                // last node reading each value
  // Activations share buffers: node i writes buffer slot_[i] (-1: the
  // logits), which holds slot_bytes_[slot] bytes per sample, and a buffer is
  // reused once the last reader of its value has run.
  std::vector<int> slot_;
  std::vector<int64_t> slot_bytes_;
  struct Buffers;
  std::shared_ptr<Buffers> spare_;  // the buffers of the last finished run
};

}  // namespace octet
