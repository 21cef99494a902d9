// What the quantizer takes from a float pass over the calibration images
// besides their statistics: GPTQ's input statistics, the float logits that
// `auto` scores its choices against, and the channel means bias correction
// subtracts the weights' rounding at. quantize_checkpoint records both during
// the calibration pass, which saves quantize() float passes of its own.
#pragma once

#include <optional>
#include <vector>

#include "quant/gptq.h"

namespace octet {

class FloatPassRecord {
 public:
  // Records GPTQ's statistics over the first `gptq_images` images, the
  // logits of the first `logit_images`, and the channel means of every weighted
  // node's input over the first `mean_images` (0: not needed).
  FloatPassRecord(const FloatExecutor& executor, int64_t gptq_images, int64_t logit_images, int64_t mean_images = 0);

  // Node `node`'s activation for the batch of images that starts at `first`
  // (batches in order, as calibrate() hands them out).
  void observe(int node, const FloatTensor& activation, int64_t first);
  // Runs the pass itself over `images` (NCHW), in the calibration pass's batches.
  void run(const FloatExecutor& executor, const std::vector<float>& images, int64_t batch_size = 128);

  const std::optional<GptqStatistics>& gptq() const { return gptq_; }
  // Of the logit images: logits_shape; a model of several outputs: [images][values], each image's outputs one
  // after another (output_values).
  const FloatTensor& logits() const { return logits_; }
  // Per node, each channel's mean over images and positions; empty for a node
  // that no weighted node reads, or without mean images.
  std::vector<std::vector<double>> channel_means() const;

 private:
  std::vector<int64_t> output_offset_;  // per node: where its values start in an image's logits; -1: no output
  std::optional<GptqStatistics> gptq_;
  FloatTensor logits_;
  int64_t mean_images_;
  std::vector<std::vector<double>> channel_sums_;  // per node, as channel_means
  std::vector<double> summed_values_;             // per node: values added into each channel's sum
};

}  // namespace octet
