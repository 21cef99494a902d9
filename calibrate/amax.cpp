#include "calibrate/amax.h"

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
// into 128 levels and spread back over the non-empty bins of each level.
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

  double best_kl = std::numeric_limits<double>::infinity();
  int best_i = last_nonzero + 1;
  std::vector<double> p(bins), q(bins);
  double outliers = 0;
  for (int b = kLevels; b < bins; ++b) outliers += static_cast<double>(h[b]);
  for (int i = kLevels; i <= last_nonzero + 1; ++i) {
    if (i > kLevels) outliers -= static_cast<double>(h[i - 1]);
    for (int b = 0; b < i; ++b) p[b] = static_cast<double>(h[b]);
    p[i - 1] += outliers;
    // Q: merge i bins into kLevels levels, then expand each level evenly over its non-empty bins.
    const double merge = static_cast<double>(i) / kLevels;
    for (int level = 0; level < kLevels; ++level) {
      const int start = static_cast<int>(std::floor(level * merge));
      const int end = level == kLevels - 1 ? i : static_cast<int>(std::floor((level + 1) * merge));
      double total = 0;
      int nonzero = 0;
      for (int b = start; b < end; ++b) {
        total += static_cast<double>(h[b]);
        nonzero += h[b] != 0;
      }
      for (int b = start; b < end; ++b) q[b] = (h[b] != 0 && nonzero) ? total / nonzero : 0.0;
    }
    double p_sum = 0, q_sum = 0;
    for (int b = 0; b < i; ++b) {
      p_sum += p[b];
      q_sum += q[b];
    }
    if (p_sum == 0 || q_sum == 0) continue;
    double kl = 0;
    for (int b = 0; b < i; ++b) {
      if (p[b] == 0) continue;
      const double pn = p[b] / p_sum, qn = q[b] / q_sum;
      kl += qn > 0 ? pn * std::log(pn / qn) : pn * 40.0;  // an empty Q bin under mass: heavy penalty
    }
    if (kl <= best_kl) {  // ties: the largest threshold, as TensorRT
      best_kl = kl;
      best_i = i;
    }
  }
  return std::min(s.abs_max(), best_i * s.bin_width());
}

double mse_amax(const TensorStats& s) {
  const auto& h = s.histogram();
  const double width = s.bin_width();
  double best_err = std::numeric_limits<double>::infinity(), best = s.abs_max();
  for (int i = kLevels; i <= TensorStats::kBins; ++i) {
    const double amax = i * width, step = amax / 127.0;
    double err = 0;
    for (int b = 0; b < TensorStats::kBins; ++b) {
      if (!h[b]) continue;
      const double centre = (b + 0.5) * width;
      const double q = std::min(std::floor(centre / step + 0.5), 127.0) * step;
      err += static_cast<double>(h[b]) * (centre - q) * (centre - q);
    }
    if (err < best_err) {
      best_err = err;
      best = amax;
    }
  }
  return std::min(s.abs_max(), best);
}
}  // namespace

AmaxMethod amax_method_from_name(const std::string& name) {
  for (AmaxMethod m : {AmaxMethod::Max, AmaxMethod::Sigma3, AmaxMethod::Percentile, AmaxMethod::Entropy,
                       AmaxMethod::Mse, AmaxMethod::Auto})
    if (name == amax_method_name(m)) return m;
  fail("unknown calibration method '" + name + "' (known: max, sigma3, percentile, entropy, mse, auto)");
}

const char* amax_method_name(AmaxMethod m) {
  switch (m) {
    case AmaxMethod::Max: return "max";
    case AmaxMethod::Sigma3: return "sigma3";
    case AmaxMethod::Percentile: return "percentile";
    case AmaxMethod::Entropy: return "entropy";
    case AmaxMethod::Mse: return "mse";
    case AmaxMethod::Auto: return "auto";
  }
  return "?";
}

const std::vector<AmaxMethod>& statistic_methods() {
  static const std::vector<AmaxMethod> methods = {AmaxMethod::Max, AmaxMethod::Sigma3, AmaxMethod::Percentile,
                                                  AmaxMethod::Entropy, AmaxMethod::Mse};
  return methods;
}

double compute_amax(const TensorStats& s, AmaxMethod method, double percentile) {
  check(s.count() > 0, "no calibration data was recorded for this tensor");
  if (s.abs_max() == 0) return 0.0;  // an all-zero tensor: the quantizer picks a safe scale
  switch (method) {
    case AmaxMethod::Max: return s.abs_max();
    case AmaxMethod::Sigma3:
      return std::min(s.abs_max(), std::max(std::abs(s.mean() - 3 * s.std()), std::abs(s.mean() + 3 * s.std())));
    case AmaxMethod::Percentile: return percentile_amax(s, percentile);
    case AmaxMethod::Entropy: return entropy_amax(s);
    case AmaxMethod::Mse: return mse_amax(s);
    case AmaxMethod::Auto: fail("auto picks among the other methods per tensor; it needs calibration data");
  }
  return s.abs_max();
}

}  // namespace octet
