// The training step's precision levers (`--precision`, `--channels-last`):
// fp32, TF32 matrix math (CUDA), automatic mixed precision in float16 (CUDA,
// with loss scaling) or bfloat16 (CPU and CUDA), and channels-last layout.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "train/options.h"

namespace octet {

// Refuses levers this device or this build cannot pull, and sets the
// process-wide TF32 switches (cuDNN's default is on: fp32 turns it off).
void apply_precision(const TrainOptions& options, const torch::Device& device);

bool uses_loss_scaling(const TrainOptions& options);

// Autocast for the forward pass of an amp-* run (nothing otherwise): on while
// it lives, and its cache of low-precision weight copies dropped at the end,
// since the next optimizer step changes the weights.
class AutocastScope {
 public:
  AutocastScope(const TrainOptions& options, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_ = false;
  torch::DeviceType device_type_;
  torch::ScalarType dtype_;
};

// The model's 4-d weights, and inputs through `input_layout`, in channels-last order.
void to_channels_last(const std::vector<torch::Tensor>& params);
torch::Tensor input_layout(const torch::Tensor& images, bool channels_last);

}  // namespace octet
