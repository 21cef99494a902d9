#include "train/loss_scaler.h"

#include "common/error.h"

namespace octet {

LossScaler::LossScaler(double initial_scale, int64_t growth_interval)
    : scale_(initial_scale), growth_interval_(growth_interval) {
  check(initial_scale > 0 && growth_interval > 0, "loss scaling needs a positive scale and growth interval");
}

bool LossScaler::unscale(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> largest;
  for (const torch::Tensor& p : params) {
    if (!p.grad().defined()) continue;
    torch::Tensor grad = p.mutable_grad();
    grad.mul_(1.0 / scale_);
    largest.push_back(grad.abs().max());  // inf stays inf, NaN propagates
  }
  const bool finite = largest.empty() || torch::stack(largest).max().isfinite().item<bool>();
  if (!finite) {
    scale_ *= 0.5;
    good_steps_ = 0;
    return false;
  }
  if (++good_steps_ == growth_interval_) {
    scale_ *= 2.0;
    good_steps_ = 0;
  }
  return true;
}

}  // namespace octet
