// Optimus's loss model l(k) = 1 / (b0 k + b1) + b2 with b >= 0 (Peng et al.,
// EuroSys 2018), and its generalisation with a free exponent,
// l(k) = (b0 k + b1)^-a + b2 (Optimus is a = 1): SGD's training loss at a
// constant learning rate often falls more slowly than 1/k (a < 1), and a curve
// forced to a = 1 then reaches its floor too early, so its b2 sits above the
// loss the run goes on to reach. Fitted without a general-purpose optimiser: for fixed a and
// b2, (l - b2)^(-1/a) is linear in b0 and b1, so b2 (and a) are searched on a
// grid with non-negative least squares inside, and the best point is polished
// by Levenberg-Marquardt kept inside the bounds. Residuals may be down-weighted
// with Huber's loss (a few outlying windows do not bend the curve).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <limits>
#include <vector>

namespace octet {

struct LossParams {
  double b0 = 0, b1 = 0, b2 = 0;
  double a = 1;  // the exponent; Optimus's model has a = 1
  double at(double k) const { return std::pow(b0 * k + b1, -a) + b2; }
  // The first k >= 0 where the model reaches `loss`; infinity when it never does.
  double steps_to(double loss) const;
};

struct LossFit {
  LossParams b;
  double origin = 0;  // k of the model counts steps after this one (a schedule change)
  double rmse = 0;  // both under the fit's weighting
  double r2 = 0;
  int points = 0;
  std::vector<double> residuals;  // loss minus model, one per fitted point
  double at(double step) const { return b.at(step - origin); }
  // The step at which the model reaches `loss`; infinity when it never does.
  double step_reaching(double loss) const { return origin + b.steps_to(loss); }
};

// optimus: a = 1; power: a fitted in [kMinExponent, kMaxExponent].
enum class CurveModel { optimus, power };
CurveModel parse_curve_model(const std::string& name);
const char* curve_model_name(CurveModel model);
constexpr double kMinExponent = 0.05, kMaxExponent = 4;

// How the windows of a curve are weighted in the fit:
// - even: plain least squares;
// - late: window i by k_i / l_i^2. 1 / l^2 makes the residuals relative, so the
//   early, high windows do not dominate (a mini-batch loss's scatter shrinks as
//   the loss falls: in proportion on the ResNet-20 log here, by a fifth while
//   the loss halves on LeNet-5's); k because a forecast extrapolates the recent
//   trend, and the early transient the model describes worst counts least.
//   Chosen on two development runs (datasets/forecast-logs/README.md), not the others.
enum class Weighting { even, late };
Weighting parse_weighting(const std::string& name);
const char* weighting_name(Weighting weighting);

struct LossFitOptions {
  CurveModel model = CurveModel::power;
  Weighting weighting = Weighting::late;
  bool robust = true;  // Huber weights (scale from the median absolute residual)
  int b2_grid = 200;   // points of the b2 search over [0, min l)
  int a_grid = 24;     // points of the exponent search (power), log-spaced
};

// Fits the points (k, loss) with k counted from `origin`: only points with
// k > origin are used. Needs at least 4 points with finite, positive losses.
// `start`, when given, competes with the grid's best point as the start of the
// polish (a bootstrap refit starts from the fit it resamples).
LossFit fit_loss(const std::vector<double>& step, const std::vector<double>& loss, double origin = 0,
                 const LossFitOptions& options = {}, const LossParams* start = nullptr);

// The step after which the curve is better described by a new fit than by the
// old one's continuation (a learning-rate milestone or the end of a warm-up):
// the split that most lowers the two-piece sum of squares, when it lowers the
// single fit's by at least `min_gain` (0.5: half); else 0 (no change found).
double detect_schedule_change(const std::vector<double>& step, const std::vector<double>& loss,
                              double min_gain = 0.5);

}  // namespace octet
