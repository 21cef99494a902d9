// Non-negative least squares: min ||A x - b|| subject to x >= 0 (Lawson and
// Hanson's active-set method). The loss model's inner fit and the speed model's
// coefficients are both linear problems whose coefficients must not be negative.
#pragma once

#include <Eigen/Dense>

namespace octet {

Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

}  // namespace octet
