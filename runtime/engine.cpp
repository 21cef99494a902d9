#include "runtime/engine.h"

namespace octet {

std::vector<Int32Tensor> Engine::run_outputs(const float* input, int64_t batch, const Hook& hook) const {
  std::vector<Int32Tensor> outputs;
  outputs.push_back(run(input, batch, hook));
  return outputs;
}

FloatTensor Engine::dequantize_logits(const Int32Tensor& logits) const {
  return dequantize_logits(logits, model().output());
}

FloatTensor Engine::dequantize_logits(const Int32Tensor& logits, int node) const {
  const FloatTensor& scale = model().quant.at(static_cast<size_t>(node)).logit_scale;
  FloatTensor out(logits.shape);
  const int64_t classes = scale.numel();
  for (int64_t i = 0; i < logits.numel(); ++i) out.data[i] = static_cast<float>(logits.data[i]) * scale.data[i % classes];
  return out;
}

}  // namespace octet
