// Optimus's loss model l(k) = 1 / (b0 k + b1) + b2 with b >= 0 (Peng et al.,
// EuroSys 2018), fitted without a general-purpose optimiser: for a fixed b2,
// 1 / (l - b2) is linear in b0 and b1, so b2 is searched over [0, min l) with
// non-negative least squares inside, and the best point is polished by a
// Levenberg-Marquardt step kept inside b >= 0. Residuals may be down-weighted
// with Huber's loss (a few outlying windows do not bend the curve).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace octet {

struct LossParams {
  double b0 = 0, b1 = 0, b2 = 0;
  double at(double k) const { return 1.0 / (b0 * k + b1) + b2; }
  // The first k >= 0 where the model reaches `loss`; infinity when it never does.
  double steps_to(double loss) const;
};

struct LossFit {
  LossParams b;
  double origin = 0;  // k of the model counts steps after this one (a schedule change)
  double rmse = 0;
  double r2 = 0;
  int points = 0;
  std::vector<double> residuals;  // loss minus model, one per fitted point
  double at(double step) const { return b.at(step - origin); }
  // The step at which the model reaches `loss`; infinity when it never does.
  double step_reaching(double loss) const { return origin + b.steps_to(loss); }
};

struct LossFitOptions {
  bool robust = true;  // Huber weights (scale from the median absolute residual)
  int b2_grid = 200;   // points of the b2 search over [0, min l)
};

// Fits the points (k, loss) with k counted from `origin`: only points with
// k > origin are used. Needs at least 4 points with finite, positive losses.
LossFit fit_loss(const std::vector<double>& step, const std::vector<double>& loss, double origin = 0,
                 const LossFitOptions& options = {});

// The step after which the curve is better described by a new fit than by the
// old one's continuation (a learning-rate milestone or the end of a warm-up):
// the split that most lowers the two-piece sum of squares, when it lowers the
// single fit's by at least `min_gain` (0.5: half); else 0 (no change found).
double detect_schedule_change(const std::vector<double>& step, const std::vector<double>& loss,
                              double min_gain = 0.5);

}  // namespace octet
