#include "forecast/loss_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "forecast/nnls.h"

namespace octet {

double LossParams::steps_to(double loss) const {
  if (at(0) <= loss) return 0;
  if (loss <= b2 || b0 <= 0) return std::numeric_limits<double>::infinity();
  return std::max(0.0, (1.0 / (loss - b2) - b1) / b0);
}

namespace {

constexpr double kMinB1 = 1e-9;  // keeps 1 / (b0 k + b1) finite at k = 0

struct Points {
  std::vector<double> k, loss, weight;  // k in units of the largest k (better conditioned)
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

// For a fixed b2: 1 / (l - b2) = b0 k + b1, solved by NNLS with each row
// weighted by (l - b2)^2 so that its residual approximates the loss residual.
LossParams linear_fit(const Points& p, double b2) {
  const auto n = static_cast<Eigen::Index>(p.k.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double gap = p.loss[static_cast<size_t>(i)] - b2;
    const double w = std::sqrt(p.weight[static_cast<size_t>(i)]) * gap * gap;
    a(i, 0) = w * p.k[static_cast<size_t>(i)];
    a(i, 1) = w;
    y(i) = w / gap;
  }
  const Eigen::VectorXd x = nnls(a, y);
  return {x(0), std::max(x(1), kMinB1), b2};
}

LossParams search_b2(const Points& p, int grid) {
  const double min_loss = *std::min_element(p.loss.begin(), p.loss.end());
  LossParams best;
  double best_sse = std::numeric_limits<double>::infinity();
  for (int i = 0; i < grid; ++i) {
    const double b2 = min_loss * static_cast<double>(i) / static_cast<double>(grid);
    const LossParams b = linear_fit(p, b2);
    const double sse = weighted_sse(p, b);
    if (sse < best_sse) best_sse = sse, best = b;
  }
  return best;
}

// Levenberg-Marquardt on the weighted residuals, each step projected onto b >= 0.
LossParams polish(const Points& p, LossParams b) {
  double lambda = 1e-3;
  double sse = weighted_sse(p, b);
  for (int iteration = 0; iteration < 100; ++iteration) {
    Eigen::Matrix3d jtj = Eigen::Matrix3d::Zero();
    Eigen::Vector3d jtr = Eigen::Vector3d::Zero();
    for (size_t i = 0; i < p.k.size(); ++i) {
      const double d = b.b0 * p.k[i] + b.b1;
      const Eigen::Vector3d j(-p.k[i] / (d * d), -1.0 / (d * d), 1.0);
      const double r = p.loss[i] - b.at(p.k[i]);
      jtj += p.weight[i] * j * j.transpose();
      jtr += p.weight[i] * j * r;
    }
    bool improved = false;
    while (lambda < 1e12) {
      Eigen::Matrix3d damped = jtj;
      damped.diagonal() += lambda * jtj.diagonal().cwiseMax(1e-30);
      const Eigen::Vector3d delta = damped.ldlt().solve(jtr);
      const LossParams trial{std::max(0.0, b.b0 + delta(0)), std::max(kMinB1, b.b1 + delta(1)),
                             std::max(0.0, b.b2 + delta(2))};
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
  for (size_t i = 0; i < p.k.size(); ++i) p.weight[i] = (c <= 0 || absolute[i] <= c) ? 1.0 : c / absolute[i];
}

}  // namespace

LossFit fit_loss(const std::vector<double>& step, const std::vector<double>& loss, double origin,
                 const LossFitOptions& options) {
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
  p.weight.assign(p.k.size(), 1.0);

  LossParams b = polish(p, search_b2(p, options.b2_grid));
  if (options.robust)
    for (int round = 0; round < 5; ++round) {
      huber_weights(p, b);
      b = polish(p, search_b2(p, options.b2_grid));
    }

  LossFit fit;
  fit.b = {b.b0 / p.scale, b.b1, b.b2};  // back to k in steps
  fit.origin = origin;
  fit.points = static_cast<int>(p.k.size());
  const double mean = std::accumulate(p.loss.begin(), p.loss.end(), 0.0) / static_cast<double>(p.loss.size());
  double sse = 0, sst = 0;
  for (size_t i = 0; i < p.k.size(); ++i) {
    const double r = p.loss[i] - b.at(p.k[i]);
    fit.residuals.push_back(r);
    sse += r * r;
    sst += (p.loss[i] - mean) * (p.loss[i] - mean);
  }
  fit.rmse = std::sqrt(sse / static_cast<double>(p.k.size()));
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
