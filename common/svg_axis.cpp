#include "common/svg_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace octet {

namespace {

// The 1-2-5 value at or above `v` (v > 0).
double round_step(double v) {
  const double decade = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= v * (1 - 1e-9)) return m * decade;
  return 10 * decade;
}

// The first and last of sorted `t` inside Tukey's far fences, or its ends when
// the values beyond would not take over four fifths of the axis.
std::pair<size_t, size_t> without_outliers(const std::vector<double>& t) {
  const size_t n = t.size();
  if (n < 8) return {0, n - 1};  // too few for quartiles
  const double q1 = t[n / 4], q3 = t[3 * n / 4], spread = 3 * (q3 - q1);
  const size_t first = std::lower_bound(t.begin(), t.end(), q1 - spread) - t.begin();
  const size_t last = std::upper_bound(t.begin(), t.end(), q3 + spread) - t.begin() - 1;
  const double kept = t[last] - t[first];
  if (!(kept > 0) || t.back() - t.front() <= 5 * kept) return {0, n - 1};
  return {first, last};
}

}  // namespace

double ChartAxis::fraction(double v) const {
  return log ? std::log10(v / lo) / std::log10(hi / lo) : (v - lo) / (hi - lo);
}

int ChartAxis::side(double v) const {
  const double slack = 1e-9 * (hi - lo);
  return v < lo - slack ? -1 : v > hi + slack ? 1 : 0;
}

std::string ChartAxis::label(double tick) const {
  char buf[32];
  if (log || ticks.size() < 2) {
    std::snprintf(buf, sizeof buf, "%g", tick);
  } else {
    // As many decimals as the step between ticks has.
    const double step = ticks[1] - ticks[0];
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, std::abs(tick) < step * 1e-6 ? 0.0 : tick);
  }
  return buf;
}

ChartAxis linear_axis(double lo, double hi, bool round_ends) {
  ChartAxis a;
  if (!(hi > lo)) lo = std::isfinite(lo) ? lo - 1 : 0, hi = lo + 2;
  const double step = round_step((hi - lo) / 5);
  const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
  a.lo = round_ends ? std::floor(lo / step + 1e-9) * step : lo;
  a.hi = round_ends ? std::ceil(hi / step - 1e-9) * step : hi;
  for (double k = round_ends ? std::floor(lo / step + 1e-9) : first;
       k <= (round_ends ? std::ceil(hi / step - 1e-9) : last); ++k)
    a.ticks.push_back(k * step);
  return a;
}

ChartAxis log_axis(double lo, double hi) {
  ChartAxis a;
  a.log = true;
  const double first_decade = std::floor(std::log10(lo) + 1e-9), last_decade = std::ceil(std::log10(hi) - 1e-9);
  const std::vector<double> steps = last_decade - first_decade <= 3 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  std::vector<double> candidates;
  for (double d = first_decade; d <= last_decade; ++d)
    for (double m : steps) candidates.push_back(m * std::pow(10.0, d));
  // The range: the candidates around [lo, hi]; the ticks: those in it.
  const auto top = std::lower_bound(candidates.begin(), candidates.end(), hi * (1 - 1e-9));
  const auto bottom = std::upper_bound(candidates.begin(), candidates.end(), lo * (1 + 1e-9)) - 1;
  a.lo = *bottom, a.hi = *top;
  a.ticks.assign(bottom, top + 1);
  return a;
}

ChartAxis value_axis(const std::vector<double>& values, bool clip_outliers) {
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x)) v.push_back(x);
  if (v.empty()) return linear_axis(0, 1, true);
  std::sort(v.begin(), v.end());
  const bool positive = v.front() > 0;
  std::pair<size_t, size_t> shown{0, v.size() - 1};
  if (clip_outliers) {
    std::vector<double> t = v;
    if (positive) std::transform(t.begin(), t.end(), t.begin(), [](double x) { return std::log10(x); });
    shown = without_outliers(t);
  }
  const double lo = v[shown.first], hi = v[shown.second];
  ChartAxis a = positive && hi > 10 * lo ? log_axis(lo, hi) : linear_axis(lo, hi, true);
  a.clipped_low = a.side(v.front()) < 0;
  a.clipped_high = a.side(v.back()) > 0;
  return a;
}

}  // namespace octet
