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

namespace {
// Values per block: blocks are summed in order, so the statistics do not
// depend on how many threads share them.
constexpr int64_t kBlock = int64_t{1} << 16;

struct BlockSums {
  double min = 0, max = 0, sum = 0, sum_sq = 0;
  int64_t first_bad = -1;  // index of the first NaN or infinite value
};

BlockSums block_sums(const float* values, int64_t begin, int64_t end) {
  BlockSums s;
  s.min = s.max = values[begin];
  for (int64_t i = begin; i < end; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) {
      s.first_bad = i;
      return s;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.sum += v;
    s.sum_sq += v * v;
  }
  return s;
}
}  // namespace

void TensorStats::add(const float* values, int64_t n, const std::string& where) {
  if (n == 0) return;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<BlockSums> parts(static_cast<size_t>(blocks));
#pragma omp parallel for if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) parts[b] = block_sums(values, b * kBlock, std::min(n, (b + 1) * kBlock));
  double batch_min = parts[0].min, batch_max = parts[0].max, sum = 0, sum_sq = 0;
  for (const BlockSums& part : parts) {
    if (part.first_bad >= 0)  // the message is built only on failure
      fail(where + ": activation is " + (std::isnan(values[part.first_bad]) ? "NaN" : "infinite") +
           " during calibration (check the model and its input)");
    batch_min = std::min(batch_min, part.min);
    batch_max = std::max(batch_max, part.max);
    sum += part.sum;
    sum_sq += part.sum_sq;
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
#pragma omp parallel if (blocks > 1)
  {
    std::vector<int64_t> local(kBins, 0);
#pragma omp for
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
        const int bin = static_cast<int>(std::abs(static_cast<double>(values[i])) * scale);
        ++local[std::min(bin, kBins - 1)];
      }
#pragma omp critical(octet_histogram_merge)
    for (int k = 0; k < kBins; ++k) bins_[k] += local[k];
  }
}

}  // namespace octet
