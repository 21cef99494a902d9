#include "forecast/nnls.h"

#include <cmath>
#include <limits>

#include "common/error.h"

namespace octet {

namespace {

// Least squares on the columns in `passive` only; the other entries are zero.
Eigen::VectorXd solve_passive(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, const std::vector<bool>& passive) {
  std::vector<Eigen::Index> columns;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    if (passive[static_cast<size_t>(j)]) columns.push_back(j);
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(columns.size()));
  for (size_t c = 0; c < columns.size(); ++c) sub.col(static_cast<Eigen::Index>(c)) = a.col(columns[c]);
  const Eigen::VectorXd z_sub = sub.colPivHouseholderQr().solve(b);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(a.cols());
  for (size_t c = 0; c < columns.size(); ++c) z(columns[c]) = z_sub(static_cast<Eigen::Index>(c));
  return z;
}

}  // namespace

Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  check(a.rows() == b.size(), "nnls: the matrix has " + std::to_string(a.rows()) + " rows but the target has " +
                                  std::to_string(b.size()) + " entries");
  check(a.allFinite() && b.allFinite(), "nnls: the problem holds a non-finite value");
  const Eigen::Index n = a.cols();
  const double tolerance = 1e-12 * std::max(1.0, a.cwiseAbs().maxCoeff()) * std::max(1.0, b.cwiseAbs().maxCoeff()) *
                           static_cast<double>(std::max(a.rows(), n));
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<size_t>(n), false);
  for (int outer = 0; outer < 3 * n + 10; ++outer) {
    const Eigen::VectorXd gradient = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    double best_gradient = tolerance;
    for (Eigen::Index j = 0; j < n; ++j)
      if (!passive[static_cast<size_t>(j)] && gradient(j) > best_gradient) best_gradient = gradient(best = j);
    if (best < 0) break;  // Karush-Kuhn-Tucker conditions hold
    passive[static_cast<size_t>(best)] = true;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      const Eigen::VectorXd z = solve_passive(a, b, passive);
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<size_t>(j)] && z(j) <= 0) feasible = false;
      if (feasible) {
        x = z;
        break;
      }
      // Step from x toward z as far as feasibility allows, then drop the
      // coefficients that reached zero from the passive set.
      double alpha = std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<size_t>(j)] && z(j) <= 0) alpha = std::min(alpha, x(j) / (x(j) - z(j)));
      x += alpha * (z - x);
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<size_t>(j)] && std::abs(x(j)) <= 1e-15) {
          passive[static_cast<size_t>(j)] = false;
          x(j) = 0;
        }
    }
  }
  return x;
}

}  // namespace octet
