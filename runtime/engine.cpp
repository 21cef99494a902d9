#include "runtime/engine.h"

namespace octet {

FloatTensor Engine::dequantize_logits(const Int32Tensor& logits) const {
  const FloatTensor& scale = model().quant[model().output()].logit_scale;
  FloatTensor out(logits.shape);
  const int64_t classes = scale.numel();
  for (int64_t i = 0; i < logits.numel(); ++i) out.data[i] = static_cast<float>(logits.data[i]) * scale.data[i % classes];
  return out;
}

}  // namespace octet
