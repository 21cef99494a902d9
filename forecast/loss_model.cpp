#include "forecast/loss_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace octet {

double LossParams::steps_to(double loss) const {
  if (at(0) <= loss) return 0;
  if (loss <= b2 || b0 <= 0) return std::numeric_limits<double>::infinity();
  return std::max(0.0, (std::pow(loss - b2, -1.0 / a) - b1) / b0);
}

CurveModel parse_curve_model(const std::string& name) {
  if (name == "optimus") return CurveModel::optimus;
  if (name == "power") return CurveModel::power;
  fail("--model: expected optimus or power, not '" + name + "'");
}

const char* curve_model_name(CurveModel model) { return model == CurveModel::optimus ? "optimus" : "power"; }

Weighting parse_weighting(const std::string& name) {
  if (name == "even") return Weighting::even;
  if (name == "late") return Weighting::late;
  fail("--weighting: expected late or even, not '" + name + "'");
}

const char* weighting_name(Weighting weighting) { return weighting == Weighting::late ? "late" : "even"; }

namespace {

constexpr double kMinB1 = 1e-9;  // keeps (b0 k + b1)^-a finite at k = 0

struct Points {
  std::vector<double> k, loss;  // k in units of the largest k (better conditioned)
  std::vector<double> emphasis;  // the Weighting's
  std::vector<double> weight;    // emphasis times the Huber weight
  double scale = 1;
};

double weighted_sse(const Points& p, const LossParams& b) {
  double sse = 0;
  for (size_t i = 0; i < p.k.size(); ++i) {
    const double r = p.loss[i] - b.at(p.k[i]);
    sse += p.weight[i] * r * r;
  }
  return sse;
}

// For fixed a and b2: (l - b2)^(-1/a) = b0 k + b1, a least-squares problem with
// b0, b1 >= 0 whose rows are weighted by |dl/dy| = a (l - b2)^(1 + 1/a), so that
// a row's residual approximates the loss residual. Two unknowns: the solution
// with b >= 0 is the unconstrained one or lies on a face (one coefficient
// zero), so the normal equations are solved directly (the search does this
// thousands of times per fit; nnls() would be as exact and much slower).
LossParams linear_fit(const Points& p, double b2, double a) {
  double skk = 0, sk1 = 0, s11 = 0, sky = 0, s1y = 0;
  for (size_t i = 0; i < p.k.size(); ++i) {
    const double gap = p.loss[i] - b2;
    const double y = std::pow(gap, -1 / a);
    const double w = p.weight[i] * (a * gap / y) * (a * gap / y);  // (a gap^(1 + 1/a))^2
    skk += w * p.k[i] * p.k[i], sk1 += w * p.k[i], s11 += w;
    sky += w * p.k[i] * y, s1y += w * y;
  }
  // The weighted sum of squares at (x0, x1), up to the constant sum of w y^2.
  const auto sse = [&](double x0, double x1) {
    return x0 * x0 * skk + 2 * x0 * x1 * sk1 + x1 * x1 * s11 - 2 * (x0 * sky + x1 * s1y);
  };
  double best0 = 0, best1 = s11 > 0 ? std::max(0.0, s1y / s11) : 0;  // b0 = 0
  const double only0 = skk > 0 ? std::max(0.0, sky / skk) : 0;        // b1 = 0
  if (sse(only0, 0) < sse(best0, best1)) best0 = only0, best1 = 0;
  const double det = skk * s11 - sk1 * sk1;
  if (det > 1e-300 * skk * s11) {
    const double x0 = (sky * s11 - s1y * sk1) / det, x1 = (s1y * skk - sky * sk1) / det;
    if (x0 >= 0 && x1 >= 0 && sse(x0, x1) < sse(best0, best1)) best0 = x0, best1 = x1;
  }
  return {best0, std::max(best1, kMinB1), b2, a};
}

std::vector<double> exponent_grid(const LossFitOptions& options) {
  if (options.model == CurveModel::optimus) return {1.0};
  std::vector<double> grid;
  const int n = std::max(2, options.a_grid);
  for (int i = 0; i < n; ++i)
    grid.push_back(kMinExponent * std::pow(kMaxExponent / kMinExponent, static_cast<double>(i) / (n - 1)));
  return grid;
}

LossParams search(const Points& p, const LossFitOptions& options) {
  const double min_loss = *std::min_element(p.loss.begin(), p.loss.end());
  LossParams best;
  double best_sse = std::numeric_limits<double>::infinity();
  for (double a : exponent_grid(options))
    for (int i = 0; i < options.b2_grid; ++i) {
      const double b2 = min_loss * static_cast<double>(i) / static_cast<double>(options.b2_grid);
      const LossParams b = linear_fit(p, b2, a);
      const double sse = weighted_sse(p, b);
      if (sse < best_sse) best_sse = sse, best = b;
    }
  return best;
}

// Levenberg-Marquardt on the weighted residuals, each step projected onto the
// bounds (b >= 0; the exponent fixed at 1, or inside its range).
LossParams polish(const Points& p, LossParams b, CurveModel model) {
  const bool free_exponent = model == CurveModel::power;
  const int n = free_exponent ? 4 : 3;
  double lambda = 1e-3;
  double sse = weighted_sse(p, b);
  for (int iteration = 0; iteration < 100; ++iteration) {
    Eigen::Matrix4d jtj = Eigen::Matrix4d::Zero();
    Eigen::Vector4d jtr = Eigen::Vector4d::Zero();
    for (size_t i = 0; i < p.k.size(); ++i) {
      const double d = b.b0 * p.k[i] + b.b1;
      const double power = std::pow(d, -b.a);
      const double slope = -b.a * power / d;  // d l / d d
      const Eigen::Vector4d j(slope * p.k[i], slope, 1.0, free_exponent ? -std::log(d) * power : 0.0);
      const double r = p.loss[i] - b.at(p.k[i]);
      jtj += p.weight[i] * j * j.transpose();
      jtr += p.weight[i] * j * r;
    }
    bool improved = false;
    while (lambda < 1e12) {
      Eigen::MatrixXd damped = jtj.topLeftCorner(n, n);
      damped.diagonal() += lambda * jtj.diagonal().head(n).cwiseMax(1e-30);
      const Eigen::VectorXd delta = damped.ldlt().solve(jtr.head(n));
      LossParams trial{std::max(0.0, b.b0 + delta(0)), std::max(kMinB1, b.b1 + delta(1)),
                       std::max(0.0, b.b2 + delta(2)), b.a};
      if (free_exponent) trial.a = std::clamp(b.a + delta(3), kMinExponent, kMaxExponent);
      const double trial_sse = weighted_sse(p, trial);
      if (std::isfinite(trial_sse) && trial_sse < sse) {
        const bool converged = sse - trial_sse < 1e-12 * sse;
        b = trial, sse = trial_sse, lambda = std::max(1e-9, lambda / 10), improved = true;
        if (converged) return b;
        break;
      }
      lambda *= 10;
    }
    if (!improved) break;
  }
  return b;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Huber weights for the current residuals: 1 inside c = 1.345 sigma, c/|r| outside,
// with sigma the median absolute residual / 0.6745.
void huber_weights(Points& p, const LossParams& b) {
  std::vector<double> absolute(p.k.size());
  for (size_t i = 0; i < p.k.size(); ++i) absolute[i] = std::abs(p.loss[i] - b.at(p.k[i]));
  const double sigma = median(absolute) / 0.6745;
  const double c = 1.345 * sigma;
  for (size_t i = 0; i < p.k.size(); ++i)
    p.weight[i] = p.emphasis[i] * ((c <= 0 || absolute[i] <= c) ? 1.0 : c / absolute[i]);
}

}  // namespace

LossFit fit_loss(const std::vector<double>& step, const std::vector<double>& loss, double origin,
                 const LossFitOptions& options, const LossParams* start) {
  check(step.size() == loss.size(), "fit_loss: " + std::to_string(step.size()) + " steps but " +
                                        std::to_string(loss.size()) + " losses");
  Points p;
  for (size_t i = 0; i < step.size(); ++i) {
    check(std::isfinite(step[i]) && std::isfinite(loss[i]), "fit_loss: point " + std::to_string(i) + " is not finite");
    if (step[i] <= origin) continue;
    check(loss[i] > 0, "fit_loss: the loss at step " + std::to_string(step[i]) + " is not positive");
    p.k.push_back(step[i] - origin);
    p.loss.push_back(loss[i]);
  }
  check(p.k.size() >= 4, "too few points to fit the loss model: " + std::to_string(p.k.size()) +
                             " after step " + std::to_string(origin) + ", at least 4 are needed");
  p.scale = *std::max_element(p.k.begin(), p.k.end());
  for (double& k : p.k) k /= p.scale;
  for (size_t i = 0; i < p.k.size(); ++i)
    p.emphasis.push_back(options.weighting == Weighting::late ? p.k[i] / (p.loss[i] * p.loss[i]) : 1.0);
  p.weight = p.emphasis;

  LossParams b = search(p, options);
  if (start) {  // in the scaled k
    const LossParams scaled{start->b0 * p.scale, start->b1, start->b2, start->a};
    if (weighted_sse(p, scaled) < weighted_sse(p, b)) b = scaled;
  }
  b = polish(p, b, options.model);
  if (options.robust)
    for (int round = 0; round < 5; ++round) {  // iteratively reweighted: each round starts from the last
      huber_weights(p, b);
      b = polish(p, b, options.model);
    }

  LossFit fit;
  fit.b = {b.b0 / p.scale, b.b1, b.b2, b.a};  // back to k in steps
  fit.origin = origin;
  fit.points = static_cast<int>(p.k.size());
  // RMSE and R^2 under the fit's own weighting (the Weighting's, not Huber's).
  const double total = std::accumulate(p.emphasis.begin(), p.emphasis.end(), 0.0);
  double mean = 0;
  for (size_t i = 0; i < p.k.size(); ++i) mean += p.emphasis[i] * p.loss[i] / total;
  double sse = 0, sst = 0;
  for (size_t i = 0; i < p.k.size(); ++i) {
    const double r = p.loss[i] - b.at(p.k[i]);
    fit.residuals.push_back(r);
    sse += p.emphasis[i] * r * r;
    sst += p.emphasis[i] * (p.loss[i] - mean) * (p.loss[i] - mean);
  }
  fit.rmse = std::sqrt(sse / total);
  fit.r2 = sst > 0 ? 1 - sse / sst : 1;
  return fit;
}

double detect_schedule_change(const std::vector<double>& step, const std::vector<double>& loss, double min_gain) {
  constexpr size_t kMinPiece = 8;
  if (step.size() < 2 * kMinPiece) return 0;
  LossFitOptions quick;
  quick.robust = false;
  quick.b2_grid = 50;
  const auto sse = [](const LossFit& f) {
    double s = 0;
    for (double r : f.residuals) s += r * r;
    return s;
  };
  const double single = sse(fit_loss(step, loss, 0, quick));
  double best = single, best_split = 0;
  for (size_t split = kMinPiece; split + kMinPiece <= step.size(); ++split) {
    const std::vector<double> head_step(step.begin(), step.begin() + static_cast<std::ptrdiff_t>(split));
    const std::vector<double> head_loss(loss.begin(), loss.begin() + static_cast<std::ptrdiff_t>(split));
    // The piece after the split restarts its own curve at the split's step.
    const double origin = step[split - 1];
    const double two = sse(fit_loss(head_step, head_loss, 0, quick)) + sse(fit_loss(step, loss, origin, quick));
    if (two < best) best = two, best_split = origin;
  }
  return best <= (1 - min_gain) * single ? best_split : 0;
}

}  // namespace octet
