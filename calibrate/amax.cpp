#include "calibrate/amax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace octet {

namespace {
constexpr int kLevels = 128;  // positive int8 levels a symmetric quantizer has for |x|

double percentile_amax(const TensorStats& s, double percentile) {
  check(percentile > 0 && percentile <= 100, "percentile must be in (0, 100]");
  const auto& h = s.histogram();
  const double target = percentile / 100.0 * static_cast<double>(s.count());
  double cumulative = 0;
  for (int b = 0; b < TensorStats::kBins; ++b) {
    cumulative += static_cast<double>(h[b]);
    if (cumulative >= target) return std::min(s.abs_max(), (b + 1) * s.bin_width());
  }
  return s.abs_max();
}

// TensorRT's entropy calibration: for each candidate threshold bin i, P is the
// histogram up to i with the outliers folded into its last bin, Q is P merged
// into 128 levels and spread back over the non-empty bins of each level. With
// N counts in all and Q's sum S (the counts below i), a bin b < i-1 of count
// h in a level of mean m adds (h/N) log((h/N) / (m/S)), so the bins below
// i-1 sum to (sum h log h - S' log N - sum over levels of T' log m + S' log S)
// / N (S', T': their counts, all and per level): prefix sums and one log per
// level instead of one per bin (about 10x faster; the same KL to rounding).
double entropy_amax(const TensorStats& s) {
  // As pytorch-quantization does, bin 0 takes bin 1's count: the spike of exact
  // zeros after a ReLU would otherwise dominate the divergence.
  std::vector<int64_t> h = s.histogram();
  h[0] = h[1];
  const int bins = TensorStats::kBins;
  int last_nonzero = 0;
  for (int b = 0; b < bins; ++b)
    if (h[b]) last_nonzero = b;
  if (last_nonzero < kLevels) return s.abs_max();  // fewer bins than levels: nothing to clip

  // Over bins [0, b): the counts, the non-empty bins, and sum h log h.
  std::vector<double> counts(bins + 1, 0.0), h_log_h(bins + 1, 0.0);
  std::vector<int> nonempty(bins + 1, 0);
  for (int b = 0; b < bins; ++b) {
    const double c = static_cast<double>(h[b]);
    counts[b + 1] = counts[b] + c;
    nonempty[b + 1] = nonempty[b] + (h[b] != 0);
    h_log_h[b + 1] = h_log_h[b] + (h[b] ? c * std::log(c) : 0.0);
  }
  const double n = counts[bins], log_n = std::log(n);
  std::vector<double> kl(static_cast<size_t>(last_nonzero + 2), std::numeric_limits<double>::infinity());
  for (int i = kLevels; i <= last_nonzero + 1; ++i) {
    const double below = counts[i];  // S: Q's sum
    if (below == 0) continue;
    const double last = static_cast<double>(h[i - 1]), folded = last + n - below;  // bin i-1 of P
    const double merge = static_cast<double>(i) / kLevels;
    double sum = h_log_h[i - 1] + counts[i - 1] * (std::log(below) - log_n), last_mean = 0;
    for (int level = 0; level < kLevels; ++level) {
      const int start = static_cast<int>(std::floor(level * merge));
      const int end = level == kLevels - 1 ? i : static_cast<int>(std::floor((level + 1) * merge));
      const int filled = nonempty[end] - nonempty[start];
      if (filled == 0) continue;
      const double total = counts[end] - counts[start], mean = total / filled;
      sum -= (level == kLevels - 1 ? total - last : total) * std::log(mean);
      if (level == kLevels - 1) last_mean = mean;
    }
    const double pn = folded / n;  // an empty Q bin under mass: heavy penalty
    kl[i] = sum / n + (folded == 0 ? 0.0 : last > 0 ? pn * std::log(pn / (last_mean / below)) : pn * 40.0);
  }
  return std::min(s.abs_max(), entropy_threshold(kl) * s.bin_width());
}

// The squared error of quantizing every bin's centre with L levels (127, or
// 255 unsigned) up to each candidate amax i bins wide, in units of a bin's
// width squared. Level k (k * i / L bins) takes the bins whose centre rounds
// to it, a run of bins:
// with S0, S1, S2 the run's sums of h, h b and h b^2 (exact, in integers),
// its error is S2 + (1 - 2 k r) S1 + (1/2 - k r)^2 S0 with r = i / L, so a
// candidate costs one step per level instead of one per bin.
double mse_amax(const TensorStats& s, int levels) {
  const auto& h = s.histogram();
  const int bins = TensorStats::kBins;
  std::vector<int64_t> s0(bins + 1, 0), s1(bins + 1, 0), s2(bins + 1, 0);  // over bins [0, b)
  for (int b = 0; b < bins; ++b) {
    s0[b + 1] = s0[b] + h[b];
    s1[b + 1] = s1[b] + h[b] * b;
    s2[b + 1] = s2[b] + h[b] * b * b;
  }
  const double width = s.bin_width();
  std::vector<double> err(bins + 1, std::numeric_limits<double>::infinity());
  for (int i = kLevels; i <= bins; ++i) {
    // The first bin of level k: the centre of bin b is (2b + 1) L / (2i)
    // levels, at least k - 1/2 from b = (2ik - i - L) / 2L on. A centre
    // exactly halfway errs as much in either level.
    const auto first_bin = [&](int k) {
      const int64_t times_2l = 2 * int64_t{i} * k - i - levels;  // that b, times 2L
      return static_cast<int>(std::min<int64_t>(times_2l <= 0 ? 0 : (times_2l + 2 * levels - 1) / (2 * levels), bins));
    };
    const long double r = static_cast<long double>(i) / levels;
    long double total = 0;
    for (int k = 0, lo = 0; k <= levels && lo < bins; ++k) {
      const int hi = k == levels ? bins : first_bin(k + 1);  // never below lo: first_bin grows with k
      const long double kr = k * r;
      total += static_cast<long double>(s2[hi] - s2[lo]) + (1 - 2 * kr) * static_cast<long double>(s1[hi] - s1[lo]) +
               (0.5L - kr) * (0.5L - kr) * static_cast<long double>(s0[hi] - s0[lo]);
      lo = hi;
    }
    err[i] = static_cast<double>(total);
  }
  return std::min(s.abs_max(), mse_threshold(err) * width);
}

// Per threshold bin, whether its score is within rounding of the smallest
// (the ties of entropy_threshold and mse_threshold).
std::vector<bool> ties_for_smallest(const std::vector<double>& scores, const char* search) {
  const double best = *std::min_element(scores.begin(), scores.end());
  check(std::isfinite(best), std::string(search) + ": no threshold was scored");
  std::vector<bool> tied(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) tied[i] = scores[i] <= best + 1e-9 * std::abs(best) + 1e-12;
  return tied;
}
}  // namespace

int entropy_threshold(const std::vector<double>& kl) {
  const std::vector<bool> tied = ties_for_smallest(kl, "entropy");
  return static_cast<int>(std::find(tied.rbegin(), tied.rend(), true).base() - tied.begin()) - 1;
}

int mse_threshold(const std::vector<double>& err) {
  const std::vector<bool> tied = ties_for_smallest(err, "mse");
  return static_cast<int>(std::find(tied.begin(), tied.end(), true) - tied.begin());
}

AmaxMethod amax_method_from_name(const std::string& name) {
  for (AmaxMethod m : {AmaxMethod::Max, AmaxMethod::Sigma3, AmaxMethod::Percentile, AmaxMethod::Entropy,
                       AmaxMethod::Mse, AmaxMethod::Auto, AmaxMethod::AutoGlobal})
    if (name == amax_method_name(m)) return m;
  fail("unknown calibration method '" + name + "' (known: max, sigma3, percentile, entropy, mse, auto, auto-global)");
}

const char* amax_method_name(AmaxMethod m) {
  switch (m) {
    case AmaxMethod::Max: return "max";
    case AmaxMethod::Sigma3: return "sigma3";
    case AmaxMethod::Percentile: return "percentile";
    case AmaxMethod::Entropy: return "entropy";
    case AmaxMethod::Mse: return "mse";
    case AmaxMethod::Auto: return "auto";
    case AmaxMethod::AutoGlobal: return "auto-global";
  }
  return "?";
}

bool scores_models(AmaxMethod m) { return m == AmaxMethod::Auto || m == AmaxMethod::AutoGlobal; }

const std::vector<AmaxMethod>& statistic_methods() {
  static const std::vector<AmaxMethod> methods = {AmaxMethod::Max, AmaxMethod::Sigma3, AmaxMethod::Percentile,
                                                  AmaxMethod::Entropy, AmaxMethod::Mse};
  return methods;
}

double compute_amax(const TensorStats& s, AmaxMethod method, double percentile, int levels) {
  check(s.count() > 0, "no calibration data was recorded for this tensor");
  check(levels == 127 || levels == 255, "amax: levels must be 127 or 255");
  if (s.abs_max() == 0) return 0.0;  // an all-zero tensor: the quantizer picks a safe scale
  switch (method) {
    case AmaxMethod::Max: return s.abs_max();
    case AmaxMethod::Sigma3:
      return std::min(s.abs_max(), std::max(std::abs(s.mean() - 3 * s.std()), std::abs(s.mean() + 3 * s.std())));
    case AmaxMethod::Percentile: return percentile_amax(s, percentile);
    case AmaxMethod::Entropy: return entropy_amax(s);
    case AmaxMethod::Mse: return mse_amax(s, levels);
    case AmaxMethod::Auto: fail("auto picks among the other methods per tensor; it needs calibration data");
    case AmaxMethod::AutoGlobal:
      fail("auto-global picks mse or percentile for the whole model; it needs calibration data");
  }
  return s.abs_max();
}

}  // namespace octet
