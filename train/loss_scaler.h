// Dynamic loss scaling for float16 mixed precision, as PyTorch's GradScaler
// does it (LibTorch's C++ API has none): the loss is multiplied by the scale
// before the backward pass so that small gradients survive in float16; the
// gradients are divided by it before the step. A step whose gradients hold an
// inf or NaN is skipped and the scale halved; after `growth_interval` good
// steps in a row the scale doubles.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace octet {

class LossScaler {
 public:
  explicit LossScaler(double initial_scale = 65536.0, int64_t growth_interval = 2000);

  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  // Unscales the parameters' gradients in place; false: they overflowed, skip
  // this step. Data-parallel ranks call it on the averaged gradients, so all
  // of them decide alike.
  bool unscale(const std::vector<torch::Tensor>& params);
  double current_scale() const { return scale_; }

 private:
  double scale_;
  int64_t growth_interval_;
  int64_t good_steps_ = 0;
};

}  // namespace octet
