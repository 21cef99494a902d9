#include "calibrate/histogram.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace octet {

double TensorStats::std() const {
  if (count_ == 0) return 0.0;
  const double m = mean();
  return std::sqrt(std::max(0.0, sum_sq_ / static_cast<double>(count_) - m * m));
}

void TensorStats::add(const float* values, int64_t n, const std::string& where) {
  if (n == 0) return;
  double batch_min = values[0], batch_max = values[0], sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v))  // the message is built only on failure: this loop sees every activation
      fail(where + ": activation is " + (std::isnan(v) ? "NaN" : "infinite") +
           " during calibration (check the model and its input)");
    batch_min = std::min(batch_min, v);
    batch_max = std::max(batch_max, v);
    sum += v;
    sum_sq += v * v;
  }
  if (count_ == 0) {
    min_ = batch_min;
    max_ = batch_max;
  } else {
    min_ = std::min(min_, batch_min);
    max_ = std::max(max_, batch_max);
  }
  count_ += n;
  sum_ += sum;
  sum_sq_ += sum_sq;
  abs_max_ = std::max(abs_max_, std::max(std::abs(batch_min), std::abs(batch_max)));

  if (range_ == 0 && abs_max_ > 0) range_ = abs_max_ * (1.0 + 1e-6);
  while (abs_max_ >= range_ && range_ > 0) {  // grow: double the range, merge bin pairs
    for (int b = 0; b < kBins / 2; ++b) bins_[b] = bins_[2 * b] + bins_[2 * b + 1];
    std::fill(bins_.begin() + kBins / 2, bins_.end(), 0);
    range_ *= 2;
  }
  if (range_ == 0) {  // all values so far are exactly zero
    bins_[0] += n;
    return;
  }
  const double scale = kBins / range_;
  for (int64_t i = 0; i < n; ++i) {
    const int b = static_cast<int>(std::abs(static_cast<double>(values[i])) * scale);
    ++bins_[std::min(b, kBins - 1)];
  }
}

}  // namespace octet
