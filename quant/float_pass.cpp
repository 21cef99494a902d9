#include "quant/float_pass.h"

#include <algorithm>
#include <cstring>

namespace octet {

FloatPassRecord::FloatPassRecord(const FloatExecutor& executor, int64_t gptq_images, int64_t logit_images)
    : output_(static_cast<int>(executor.graph().nodes.size()) - 1) {
  if (gptq_images > 0) gptq_.emplace(executor, gptq_images);
  if (logit_images > 0) logits_ = FloatTensor({logit_images, executor.shapes().back().c});
}

void FloatPassRecord::observe(int node, const FloatTensor& activation, int64_t first) {
  if (gptq_) gptq_->add(node, activation, first);
  if (node != output_ || logits_.numel() == 0) return;
  const int64_t classes = logits_.dim(1), n = std::min(activation.dim(0), logits_.dim(0) - first);
  if (n > 0) std::memcpy(logits_.ptr() + first * classes, activation.ptr(), sizeof(float) * n * classes);
}

void FloatPassRecord::run(const FloatExecutor& executor, const std::vector<float>& images, int64_t batch_size) {
  const int64_t image_numel = executor.shapes()[0].numel();
  const int64_t count = std::max(gptq_ ? gptq_->count() : 0, logits_.numel() ? logits_.dim(0) : 0);
  for (int64_t first = 0; first < count; first += batch_size) {
    const int64_t n = std::min(batch_size, count - first);
    executor.run(images.data() + first * image_numel, n,
                 [&](int node, const FloatTensor& activation) { observe(node, activation, first); });
  }
}

}  // namespace octet
