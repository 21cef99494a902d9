// Running statistics of one activation tensor: min, max, mean, std and a
// 2048-bin histogram of |x|. The histogram starts at the first batch's max|x|;
// when a later batch exceeds the range, the range doubles and pairs of bins
// merge, so counts stay exact and the bin count stays 2048.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

class TensorStats {
 public:
  static constexpr int kBins = 2048;

  // Adds values; fails naming `where` if any is NaN or infinite.
  void add(const float* values, int64_t count, const std::string& where);

  int64_t count() const { return count_; }
  double min() const { return min_; }
  double max() const { return max_; }
  double abs_max() const { return abs_max_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double std() const;
  double bin_width() const { return range_ / kBins; }
  double range() const { return range_; }  // histogram covers |x| in [0, range)
  const std::vector<int64_t>& histogram() const { return bins_; }

 private:
  std::vector<int64_t> bins_ = std::vector<int64_t>(kBins, 0);
  double range_ = 0;
  int64_t count_ = 0;
  double sum_ = 0, sum_sq_ = 0;
  double min_ = 0, max_ = 0, abs_max_ = 0;
};

}  // namespace octet
