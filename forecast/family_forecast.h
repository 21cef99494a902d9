// A partial run forecast from complete runs of its family (other depths of the
// same network, other learning rates or seeds): the weighted geometric mean of
// their fitted curves, stretched along the steps and shifted in log loss to
// match the part that has run. A run's own first half pins down where it is
// and how fast it moves; the family says how the curve bends later, which half
// a curve alone does not (a loss model fitted to it may flatten too early or
// never reach the target).
#pragma once

#include <vector>

#include "forecast/forecast.h"
#include "forecast/loss_model.h"
#include "forecast/step_log.h"

namespace octet {

struct FamilyMember {
  const LossFit* fit = nullptr;  // a complete run's fit
  double weight = 0;             // e.g. the depth regression's; the weights sum to 1
};

struct FamilyForecast {
  // The forecast loss at step k is exp(shift) * template(scale * k).
  double scale = 1, shift = 0;
  double steps = 0;  // to the target loss; infinity when never within the horizon
  double at(const std::vector<FamilyMember>& family, double step) const;
};

// The members' weights for a run of `depth`: the ridge regression's over the
// members' depths (depth_regression.h) when `by_depth` and they hold two
// depths or more, else alike.
std::vector<double> family_weights(const std::vector<double>& member_depths, double depth, bool by_depth,
                                   double lambda = 1e-3);

// The complete fits as members, weighted for a run of `depth` by family_weights.
std::vector<FamilyMember> weighted_family(const std::vector<const LossFit*>& fits,
                                          const std::vector<double>& member_depths, double depth, bool by_depth,
                                          double lambda = 1e-3);

// The band of a family forecast of `steps` from the same method's errors on
// other runs ((forecast - real) / real): were its error one of theirs, the real
// step would be steps / (1 + error). p10 and p90: the smallest and largest of
// those and `steps`; p50: `steps`.
Band band_from_errors(double steps, const std::vector<double>& errors);

// One run forecast without itself, for judging a forecast method: the family
// forecast of its steps to target (from the rest), the rest's mean step, and
// its real step.
struct Hindcast {
  double forecast = 0, mean = 0, real = 0;
};

// How far to trust a family forecast over the family's mean step, learnt from
// hindcasts: the k in [0, 1] that best fits log(real / mean) = k log(forecast /
// mean) by least squares. Near 0 where the runs reach the target alike whatever
// their early pace (the mean wins); near 1 where the forecast explains their
// spread. A hindcast that never reaches the target gives 0: the forecast failed
// on a run like this one. No hindcasts: 1.
double blend_weight(const std::vector<Hindcast>& hindcasts);

// mean (forecast / mean)^weight; infinity when the forecast never reaches the
// target and weight > 0.
double blended_steps(double forecast, double mean, double weight);

// The blend's errors ((blended - real) / real) on the hindcasts, for its band.
std::vector<double> blend_errors(const std::vector<Hindcast>& hindcasts, double weight);

// The family forecast's own errors ((forecast - real) / real) on the hindcasts.
std::vector<double> hindcast_errors(const std::vector<Hindcast>& hindcasts);

// A family forecast of `forecast` steps judged by its hindcasts: its band
// (band_from_errors of their errors) and, from 2 hindcasts on, its blend with
// the family's `mean` step.
struct JudgedForecast {
  Band band;
  bool has_blend = false;
  double blend_weight = 1, blend_steps = 0;
  Band blend_band;
};
JudgedForecast judge_by_hindcasts(double forecast, double mean, const std::vector<Hindcast>& hindcasts);

// Smallest and largest stretch searched: runs of one family differ by less than
// a factor of two in speed, or they are not one family.
constexpr double kMinFamilyScale = 0.5, kMaxFamilyScale = 2;

// Fits scale and shift to the part's windows after `from` (late weighting:
// window i by its step after `from`, on log losses, i.e. relative residuals;
// even: alike), then the first step at which the forecast reaches
// `target_loss`, searched up to `horizon`. Needs at least 2 members and 3 windows.
FamilyForecast forecast_from_family(const Curve& part, double from, const std::vector<FamilyMember>& family,
                                    double target_loss, Weighting weighting, double horizon);

}  // namespace octet
