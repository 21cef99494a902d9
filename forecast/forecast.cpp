#include "forecast/forecast.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/error.h"

namespace octet {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double quantile(std::vector<double> sorted_values, double q) {
  std::sort(sorted_values.begin(), sorted_values.end());
  const double position = q * static_cast<double>(sorted_values.size() - 1);
  const auto low = static_cast<size_t>(std::floor(position));
  const size_t high = std::min(low + 1, sorted_values.size() - 1);
  const double a = sorted_values[low], b = sorted_values[high];
  if (std::isinf(a) || std::isinf(b)) return position - static_cast<double>(low) < 0.5 ? a : b;
  return a + (position - static_cast<double>(low)) * (b - a);
}

}  // namespace

StepsForecast forecast_steps_to_loss(const Curve& curve, const LossFit& fit, double target_loss, int replicates,
                                     uint64_t seed, const LossFitOptions& options) {
  check(replicates >= 10, "the bootstrap needs at least 10 replicates, not " + std::to_string(replicates));
  StepsForecast result;
  // Even when a noisy window of the partial run already dips below the target,
  // the fitted curve, not that window, says where the run gets there.
  result.point = fit.step_reaching(target_loss);

  std::vector<double> fitted_step;
  for (double s : curve.step)
    if (s > fit.origin) fitted_step.push_back(s);
  const size_t n = fit.residuals.size();
  const size_t block = std::max<size_t>(1, static_cast<size_t>(std::cbrt(static_cast<double>(n))));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> start(0, n - block);
  // A residual moved to another window keeps its size (even weighting) or its
  // size relative to the model (late weighting, whose residuals are relative).
  const auto noisy = [&](size_t at, size_t from) {
    const double model = fit.at(fitted_step[at]);
    if (options.weighting == Weighting::even) return model + fit.residuals[from];
    return model * (1 + fit.residuals[from] / fit.at(fitted_step[from]));
  };
  // Each refit starts from the fit it resamples, so a coarser search suffices.
  LossFitOptions refit = options;
  refit.b2_grid = std::max(20, options.b2_grid / 4);
  refit.a_grid = std::max(6, options.a_grid / 3);
  std::vector<double> answers;
  std::vector<double> resampled(n);
  for (int r = 0; r < replicates; ++r) {
    for (size_t i = 0; i < n; i += block) {
      const size_t from = start(rng);
      for (size_t j = 0; j < block && i + j < n; ++j)
        resampled[i + j] = std::max(1e-12, noisy(i + j, from + j));
    }
    answers.push_back(fit_loss(fitted_step, resampled, fit.origin, refit, &fit.b).step_reaching(target_loss));
  }
  result.band = {quantile(answers, 0.1), quantile(answers, 0.5), quantile(answers, 0.9)};
  return result;
}

std::vector<double> monotone_decreasing(const std::vector<double>& values) {
  // Pool adjacent violators: blocks (mean, count) merged while a later block's
  // mean exceeds an earlier one's.
  std::vector<std::pair<double, size_t>> blocks;
  for (double v : values) {
    blocks.emplace_back(v, 1);
    while (blocks.size() > 1 && blocks[blocks.size() - 2].first < blocks.back().first) {
      const auto [mean, count] = blocks.back();
      blocks.pop_back();
      auto& previous = blocks.back();
      previous.first = (previous.first * static_cast<double>(previous.second) + mean * static_cast<double>(count)) /
                       static_cast<double>(previous.second + count);
      previous.second += count;
    }
  }
  std::vector<double> result;
  for (const auto& [mean, count] : blocks) result.insert(result.end(), count, mean);
  return result;
}

Crossing first_reaching_accuracy(const Curve& curve, double target_acc) {
  std::vector<double> negated_acc;
  for (double a : curve.acc) negated_acc.push_back(-a);
  const std::vector<double> acc = monotone_decreasing(negated_acc);  // negated: non-decreasing accuracy
  const std::vector<double> loss = monotone_decreasing(curve.loss);
  for (size_t i = 0; i < curve.size(); ++i)
    if (-acc[i] >= target_acc) {
      Crossing c{curve.step[i], loss[i]};
      // The first step the monotone loss is there (its block may start before i).
      for (size_t j = 0; j <= i; ++j)
        if (loss[j] <= c.loss) return {curve.step[j], c.loss};
    }
  return {};
}

double steps_to_gap_fraction(const LossFit& fit, double from, double gap_fraction) {
  check(gap_fraction > 0 && gap_fraction < 1, "the gap fraction must lie in (0, 1)");
  const LossParams& b = fit.b;
  if (b.b0 <= 0) return kInfinity;
  // (b0 k + b1)^-a = f (b0 k_from + b1)^-a
  const double k_from = std::max(0.0, from - fit.origin);
  return fit.origin + ((b.b0 * k_from + b.b1) * std::pow(gap_fraction, -1 / b.a) - b.b1) / b.b0;
}

double steps_to_relative_change(const LossFit& fit, double from, double relative_change, double per_steps) {
  check(relative_change > 0 && per_steps > 0, "the relative change and its span must be positive");
  const auto slow = [&](double s) { return fit.at(s) - fit.at(s + per_steps) < relative_change * fit.at(s); };
  if (slow(from)) return from;
  // The relative drop shrinks as k grows: double until slow, then bisect.
  double low = from, high = from + per_steps;
  while (!slow(high)) {
    low = high;
    high = from + 2 * (high - from);
    if (high - from > 1e15) return kInfinity;
  }
  while (high - low > 0.5) {
    const double middle = 0.5 * (low + high);
    (slow(middle) ? high : low) = middle;
  }
  return high;
}

}  // namespace octet
