// What the quantizer takes from a float pass over the calibration images
// besides their statistics: GPTQ's input statistics and the float logits that
// `auto` scores its choices against. quantize_checkpoint records both during
// the calibration pass, which saves quantize() float passes of its own.
#pragma once

#include <optional>
#include <vector>

#include "quant/gptq.h"

namespace octet {

class FloatPassRecord {
 public:
  // Records GPTQ's statistics over the first `gptq_images` images and the
  // logits of the first `logit_images` (0: not needed).
  FloatPassRecord(const FloatExecutor& executor, int64_t gptq_images, int64_t logit_images);

  // Node `node`'s activation for the batch of images that starts at `first`
  // (batches in order, as calibrate() hands them out).
  void observe(int node, const FloatTensor& activation, int64_t first);
  // Runs the pass itself over `images` (NCHW), in the calibration pass's batches.
  void run(const FloatExecutor& executor, const std::vector<float>& images, int64_t batch_size = 128);

  const std::optional<GptqStatistics>& gptq() const { return gptq_; }
  const FloatTensor& logits() const { return logits_; }  // [logit images][classes]

 private:
  int output_;
  std::optional<GptqStatistics> gptq_;
  FloatTensor logits_;
};

}  // namespace octet
