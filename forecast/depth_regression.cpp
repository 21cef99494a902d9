#include "forecast/depth_regression.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace octet {

namespace {

// The regressed targets of a run: log b0, b1, b2, a - 1 (the ridge penalty
// pulls the exponent toward Optimus's 1, and keeps it there for Optimus fits).
Eigen::Vector4d targets(const LossParams& b) {
  constexpr double kFloor = 1e-12;  // a zero coefficient has no logarithm
  return {std::log(std::max(b.b0, kFloor)), b.b1, b.b2, b.a - 1};
}

double bandwidth(const std::vector<RunCoefficients>& runs) {
  double low = runs.front().depth, high = low;
  for (const auto& r : runs) low = std::min(low, r.depth), high = std::max(high, r.depth);
  return std::max(1.0, (high - low) / static_cast<double>(runs.size() - 1));
}

// Features of a depth: [1, depth / 100] for ridge; kernel values for rbf.
double kernel_value(DepthKernel kernel, double a, double b, double width) {
  if (kernel == DepthKernel::ridge) return 1.0 + (a / 100.0) * (b / 100.0);
  const double d = (a - b) / width;
  return std::exp(-0.5 * d * d);
}

}  // namespace

DepthModel fit_depth_model(const std::vector<RunCoefficients>& runs, DepthKernel kernel, double lambda) {
  check(runs.size() >= 2, "the depth regression needs at least 2 runs, has " + std::to_string(runs.size()));
  bool distinct = false;
  for (const auto& r : runs) distinct |= r.depth != runs.front().depth;
  check(distinct, "the depth regression needs runs of at least two different depths");
  check(lambda > 0, "the ridge penalty must be positive");
  DepthModel model;
  model.kernel = kernel;
  model.lambda = lambda;
  model.runs = runs;
  return model;
}

// Kernel ridge in its dual form: alpha = (K + lambda I)^-1 y, prediction
// k(depth)' alpha; both kernels fit this way (the ridge one is the linear kernel
// with a constant feature). The rbf kernel regresses the residual from the
// mean, which adds (1 - sum v) / n to every weight.
std::vector<double> DepthModel::weights(double depth) const {
  const auto n = static_cast<Eigen::Index>(runs.size());
  const double width = bandwidth(runs);
  Eigen::MatrixXd k(n, n);
  Eigen::VectorXd at(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    at(i) = kernel_value(kernel, depth, runs[static_cast<size_t>(i)].depth, width);
    for (Eigen::Index j = 0; j < n; ++j)
      k(i, j) = kernel_value(kernel, runs[static_cast<size_t>(i)].depth, runs[static_cast<size_t>(j)].depth, width);
  }
  k.diagonal().array() += lambda;
  Eigen::VectorXd v = k.ldlt().solve(at);
  if (kernel == DepthKernel::rbf) v.array() += (1 - v.sum()) / static_cast<double>(n);
  return {v.data(), v.data() + n};
}

LossParams DepthModel::predict(double depth) const {
  const std::vector<double> w = weights(depth);
  Eigen::Vector4d t = Eigen::Vector4d::Zero();
  for (size_t i = 0; i < runs.size(); ++i) t += w[i] * targets(runs[i].b);
  return {std::exp(t(0)), std::max(1e-9, t(1)), std::max(0.0, t(2)), std::clamp(1 + t(3), kMinExponent, kMaxExponent)};
}

std::vector<LossParams> leave_one_out(const std::vector<RunCoefficients>& runs, DepthKernel kernel, double lambda) {
  std::vector<LossParams> predictions;
  for (size_t held = 0; held < runs.size(); ++held) {
    std::vector<RunCoefficients> rest;
    for (size_t i = 0; i < runs.size(); ++i)
      if (i != held) rest.push_back(runs[i]);
    predictions.push_back(fit_depth_model(rest, kernel, lambda).predict(runs[held].depth));
  }
  return predictions;
}

}  // namespace octet
