#include "forecast/family_forecast.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "forecast/depth_regression.h"

namespace octet {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kScaleGrid = 121;  // log-spaced over [kMinFamilyScale, kMaxFamilyScale]: 1.2% apart
constexpr int kScaleRefine = 41;  // then between the best point's neighbours

// A member's log loss at a step; before its fit's origin (a warm-up) it holds
// the origin's value, so every template falls monotonically.
double member_log_loss(const LossFit& fit, double step) {
  return std::log(fit.b.at(std::max(0.0, step - fit.origin)));
}

double template_log_loss(const std::vector<FamilyMember>& family, double step) {
  double sum = 0;
  for (const FamilyMember& m : family) sum += m.weight * member_log_loss(*m.fit, step);
  return sum;
}

struct Calibration {
  double scale = 1, shift = 0, cost = kInfinity;
};

// For a fixed scale the best shift is the weighted mean residual.
Calibration calibrate_at(const std::vector<FamilyMember>& family, const std::vector<double>& step,
                         const std::vector<double>& log_loss, const std::vector<double>& weight, double scale) {
  std::vector<double> residual(step.size());
  double weight_sum = 0, shift = 0;
  for (size_t i = 0; i < step.size(); ++i) {
    residual[i] = log_loss[i] - template_log_loss(family, scale * step[i]);
    shift += weight[i] * residual[i];
    weight_sum += weight[i];
  }
  shift /= weight_sum;
  double cost = 0;
  for (size_t i = 0; i < step.size(); ++i) cost += weight[i] * (residual[i] - shift) * (residual[i] - shift);
  return {scale, shift, std::isfinite(cost) ? cost : kInfinity};
}

Calibration calibrate(const std::vector<FamilyMember>& family, const std::vector<double>& step,
                      const std::vector<double>& log_loss, const std::vector<double>& weight) {
  const double low = std::log(kMinFamilyScale), high = std::log(kMaxFamilyScale);
  const double gap = (high - low) / (kScaleGrid - 1);
  Calibration best;
  for (int i = 0; i < kScaleGrid; ++i) {
    const Calibration c = calibrate_at(family, step, log_loss, weight, std::exp(low + gap * i));
    if (c.cost < best.cost) best = c;
  }
  const double centre = std::log(best.scale);
  for (int i = 0; i < kScaleRefine; ++i) {
    const double s = std::clamp(centre - gap + 2 * gap * i / (kScaleRefine - 1), low, high);
    const Calibration c = calibrate_at(family, step, log_loss, weight, std::exp(s));
    if (c.cost < best.cost) best = c;
  }
  return best;
}

// The first step at or under the target: a log-spaced scan finds the first
// grid point there, bisection the step (a depth regression's weights may be
// negative, so the template need not fall monotonically everywhere).
double first_step_reaching(const std::vector<FamilyMember>& family, const Calibration& c, double target_loss,
                           double from, double horizon) {
  constexpr int kScan = 2000;
  const double log_target = std::log(target_loss);
  const auto reached = [&](double step) { return c.shift + template_log_loss(family, c.scale * step) <= log_target; };
  if (reached(from)) return from;
  const double first = std::max(from, 1.0), ratio = std::pow(horizon / first, 1.0 / kScan);
  double low = from;
  for (int i = 1; i <= kScan; ++i) {
    double high = first * std::pow(ratio, i);
    if (!reached(high)) {
      low = high;
      continue;
    }
    while (high - low > 1) {
      const double mid = 0.5 * (low + high);
      (reached(mid) ? high : low) = mid;
    }
    return std::ceil(high);
  }
  return kInfinity;
}

}  // namespace

std::vector<double> family_weights(const std::vector<double>& member_depths, double depth, bool by_depth,
                                   double lambda) {
  check(!member_depths.empty(), "a family needs members");
  bool distinct = false;
  for (double d : member_depths) distinct |= d != member_depths.front();
  if (!by_depth || !distinct) return std::vector<double>(member_depths.size(), 1.0 / static_cast<double>(member_depths.size()));
  std::vector<RunCoefficients> runs;
  for (double d : member_depths) runs.push_back({d, {}});
  return fit_depth_model(runs, DepthKernel::ridge, lambda).weights(depth);
}

std::vector<FamilyMember> weighted_family(const std::vector<const LossFit*>& fits,
                                          const std::vector<double>& member_depths, double depth, bool by_depth,
                                          double lambda) {
  const std::vector<double> weights = family_weights(member_depths, depth, by_depth, lambda);
  std::vector<FamilyMember> family;
  for (size_t i = 0; i < fits.size(); ++i) family.push_back({fits[i], weights[i]});
  return family;
}

Band band_from_errors(double steps, const std::vector<double>& errors) {
  double low = steps, high = steps;
  for (double error : errors) {
    const double real = steps / (1 + error);
    low = std::min(low, real);
    high = std::max(high, real);
  }
  return {low, steps, high};
}

double blend_weight(const std::vector<Hindcast>& hindcasts) {
  double xy = 0, xx = 0;
  for (const Hindcast& h : hindcasts) {
    check(h.mean > 0 && h.real > 0 && h.forecast > 0, "a hindcast needs positive steps");
    if (!std::isfinite(h.forecast)) return 0;
    const double x = std::log(h.forecast / h.mean), y = std::log(h.real / h.mean);
    xy += x * y;
    xx += x * x;
  }
  return xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 1.0;
}

double blended_steps(double forecast, double mean, double weight) {
  if (weight <= 0) return mean;
  if (!std::isfinite(forecast)) return kInfinity;
  return mean * std::pow(forecast / mean, weight);
}

std::vector<double> blend_errors(const std::vector<Hindcast>& hindcasts, double weight) {
  std::vector<double> errors;
  for (const Hindcast& h : hindcasts) errors.push_back((blended_steps(h.forecast, h.mean, weight) - h.real) / h.real);
  return errors;
}

std::vector<double> hindcast_errors(const std::vector<Hindcast>& hindcasts) {
  std::vector<double> errors;
  for (const Hindcast& h : hindcasts) errors.push_back((h.forecast - h.real) / h.real);
  return errors;
}

JudgedForecast judge_by_hindcasts(double forecast, double mean, const std::vector<Hindcast>& hindcasts) {
  JudgedForecast j;
  j.band = band_from_errors(forecast, hindcast_errors(hindcasts));
  j.has_blend = hindcasts.size() >= 2;
  if (!j.has_blend) return j;
  j.blend_weight = blend_weight(hindcasts);
  j.blend_steps = blended_steps(forecast, mean, j.blend_weight);
  j.blend_band = band_from_errors(j.blend_steps, blend_errors(hindcasts, j.blend_weight));
  return j;
}

double FamilyForecast::at(const std::vector<FamilyMember>& family, double step) const {
  return std::exp(shift + template_log_loss(family, scale * step));
}

FamilyForecast forecast_from_family(const Curve& part, double from, const std::vector<FamilyMember>& family,
                                    double target_loss, Weighting weighting, double horizon) {
  check(family.size() >= 2, "a family forecast needs at least 2 complete runs, has " + std::to_string(family.size()));
  check(target_loss > 0, "the target loss must be positive");
  std::vector<double> step, log_loss, weight;
  for (size_t i = 0; i < part.size(); ++i)
    if (part.step[i] > from && part.loss[i] > 0 && std::isfinite(part.loss[i])) {
      step.push_back(part.step[i]);
      log_loss.push_back(std::log(part.loss[i]));
      weight.push_back(weighting == Weighting::late ? part.step[i] - from : 1.0);
    }
  check(step.size() >= 3, "a family forecast needs at least 3 windows after step " + std::to_string(from) +
                              ", has " + std::to_string(step.size()));

  const Calibration mix = calibrate(family, step, log_loss, weight);
  FamilyForecast result;
  result.scale = mix.scale;
  result.shift = mix.shift;
  result.steps = first_step_reaching(family, mix, target_loss, from, horizon);
  return result;
}

}  // namespace octet
