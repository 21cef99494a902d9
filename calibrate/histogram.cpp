#include "calibrate/histogram.h"

#include <immintrin.h>

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

// AVX2 (octet's CPU baseline): eight float lanes for min and max, and four
// double accumulators each for the sums, combined in a fixed order (one
// running sum would wait on every addition); the result does not depend on
// the number of threads.
BlockSums block_sums(const float* values, int64_t begin, int64_t end) {
  __m256 lo = _mm256_set1_ps(values[begin]), hi = lo, unordered = _mm256_setzero_ps();
  __m256d sum[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()}, sum_sq[2] = {sum[0], sum[0]};
  const int64_t vector_end = begin + (end - begin) / 8 * 8;
  for (int64_t i = begin; i < vector_end; i += 8) {
    const __m256 v = _mm256_loadu_ps(values + i);
    const __m256 zero_if_finite = _mm256_sub_ps(v, v);  // NaN for NaN and infinities
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(zero_if_finite, zero_if_finite, _CMP_UNORD_Q));
    lo = _mm256_min_ps(lo, v);
    hi = _mm256_max_ps(hi, v);
    const __m256d halves[2] = {_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))};
    for (int h = 0; h < 2; ++h) {
      sum[h] = _mm256_add_pd(sum[h], halves[h]);
      sum_sq[h] = _mm256_fmadd_pd(halves[h], halves[h], sum_sq[h]);
    }
  }
  alignas(32) float lo_lanes[8], hi_lanes[8];
  alignas(32) double sum_lanes[2][4], sum_sq_lanes[2][4];
  _mm256_store_ps(lo_lanes, lo);
  _mm256_store_ps(hi_lanes, hi);
  for (int h = 0; h < 2; ++h) {
    _mm256_store_pd(sum_lanes[h], sum[h]);
    _mm256_store_pd(sum_sq_lanes[h], sum_sq[h]);
  }
  BlockSums s;
  const auto not_finite = [](float v) { return !std::isfinite(v); };
  if (_mm256_movemask_ps(unordered) != 0 || std::any_of(values + vector_end, values + end, not_finite)) {
    s.first_bad = std::find_if(values + begin, values + end, not_finite) - values;
    return s;
  }
  s.min = *std::min_element(lo_lanes, lo_lanes + 8);
  s.max = *std::max_element(hi_lanes, hi_lanes + 8);
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j) {
      s.sum += sum_lanes[h][j];
      s.sum_sq += sum_sq_lanes[h][j];
    }
  for (int64_t i = vector_end; i < end; ++i) {
    const double v = values[i];
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.sum += v;
    s.sum_sq += v * v;
  }
  return s;
}

// Copies of the histogram that count_bins spreads consecutive values over:
// a run of values in one bin would otherwise wait on its own previous
// increment each time.
constexpr int kCopies = 4;

// For each of the 256 patterns of 8 lanes, the lanes that are set, first:
// _mm256_permutevar8x32_epi32 with it packs those lanes to the front.
struct LanePacking {
  alignas(32) int32_t lanes[256][8] = {};  // unset lanes read lane 0
  constexpr LanePacking() {
    for (int mask = 0; mask < 256; ++mask)
      for (int lane = 0, n = 0; lane < 8; ++lane)
        if (mask >> lane & 1) lanes[mask][n++] = lane;
  }
};
constexpr LanePacking kLanePacking;  // built by the compiler, not at start-up

// Adds the bins of |values[begin, end)| at `scale` bins per unit to
// `counts`, kCopies histograms of `bins` side by side. Exact zeros (half of
// a ReLU's output) are only counted, into bin 0; the bins of the other
// values are computed eight at a time in double, as the scalar tail does,
// packed together, and counted after.
void count_bins(const float* values, int64_t begin, int64_t end, double scale, int bins, int64_t* counts) {
  constexpr int64_t kChunk = 512;
  int32_t index[kChunk];
  const __m256d scale4 = _mm256_set1_pd(scale);
  const __m128i last_bin = _mm_set1_epi32(bins - 1);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t first = begin; first < end; first += kChunk) {
    const int64_t n = std::min(kChunk, end - first);
    const float* x = values + first;
    int64_t kept = 0, zeros = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i));
      const int nonzero = _mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NEQ_OQ));
      const __m128i lo = _mm_min_epi32(
          _mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), scale4)), last_bin);
      const __m128i hi = _mm_min_epi32(
          _mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), scale4)), last_bin);
      const __m256i packed = _mm256_permutevar8x32_epi32(
          _mm256_set_m128i(hi, lo), _mm256_load_si256(reinterpret_cast<const __m256i*>(kLanePacking.lanes[nonzero])));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(index + kept), packed);
      const int count = __builtin_popcount(nonzero);
      kept += count;
      zeros += 8 - count;
    }
    for (; i < n; ++i) {
      if (x[i] == 0) {
        ++zeros;
        continue;
      }
      index[kept++] = std::min(static_cast<int32_t>(std::abs(static_cast<double>(x[i])) * scale), bins - 1);
    }
    counts[0] += zeros;
    for (int64_t k = 0; k < kept; ++k) ++counts[index[k] + static_cast<int32_t>(k % kCopies) * bins];
  }
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
    std::vector<int64_t> local(kCopies * kBins, 0);
#pragma omp for
    for (int64_t b = 0; b < blocks; ++b)
      count_bins(values, b * kBlock, std::min(n, (b + 1) * kBlock), scale, kBins, local.data());
#pragma omp critical(octet_histogram_merge)
    for (int copy = 0; copy < kCopies; ++copy)
      for (int k = 0; k < kBins; ++k) bins_[k] += local[copy * kBins + k];
  }
}

}  // namespace octet
