// What a partial run says about the rest: the step at which the fitted curve
// reaches a target loss, with a P10/P50/P90 band from a residual bootstrap, and
// scale-free convergence points.
#pragma once

#include <cstdint>
#include <vector>

#include "forecast/loss_model.h"
#include "forecast/step_log.h"

namespace octet {

struct Band {
  double p10 = 0, p50 = 0, p90 = 0;  // infinity where the curve never gets there
  bool contains(double x) const { return x >= p10 && x <= p90; }
};

// The fit's own answer, and the band of the answers of `replicates` refits to
// the fitted curve plus resampled residuals (moving blocks, since neighbouring
// windows' residuals are correlated).
struct StepsForecast {
  double point = 0;  // from the fit itself
  Band band;
};
StepsForecast forecast_steps_to_loss(const Curve& curve, const LossFit& fit, double target_loss, int replicates,
                                     uint64_t seed, const LossFitOptions& options = {});

// The least-squares non-increasing sequence closest to `values` (isotonic
// regression, pool adjacent violators): a model-free smooth of a noisy curve.
std::vector<double> monotone_decreasing(const std::vector<double>& values);

// Where a run reaches a target training accuracy, read off its aggregated
// curve without the loss model: `loss` is the monotone (isotonic) fit of the
// loss at the first window where the monotone fit of the accuracy reaches
// `target_acc`, and `step` the first window where the monotone loss is down to
// it. A first passage of the raw, noisy curve would come early, on a lucky
// window, and bias every forecast late. step < 0 when it never does.
struct Crossing {
  double step = -1;
  double loss = 0;
};
Crossing first_reaching_accuracy(const Curve& curve, double target_acc);

// Scale-free convergence rules on the fitted curve, as steps:
// - the gap to the asymptote b2 has shrunk to `gap_fraction` of its value at `from`;
// - the loss falls by less than `relative_change` of itself over `per_steps` steps.
double steps_to_gap_fraction(const LossFit& fit, double from, double gap_fraction);
double steps_to_relative_change(const LossFit& fit, double from, double relative_change, double per_steps);

}  // namespace octet
