// Regression across runs over model depth (the Optimus lab: predict ResNet-50's
// curve from ResNet-18/20/32/44/56). Both kernels make the prediction at a depth
// a weighted sum of the runs' values, so the same weights regress the loss
// model's coefficients (b0, which spans decades between runs, on its
// logarithm so predictions stay positive; b1, b2 and the exponent a as they
// are, clamped to their bounds) or whole curves (the runs' fitted log losses,
// step by step: no coefficient of one run need mean the same as another's).
#pragma once

#include <string>
#include <vector>

#include "forecast/loss_model.h"

namespace octet {

struct RunCoefficients {
  double depth = 0;
  LossParams b;
};

// ridge: linear in depth (extrapolates along the trend); rbf: Gaussian-kernel
// ridge (bandwidth the mean gap between depths; returns to the mean far away).
enum class DepthKernel { ridge, rbf };

struct DepthModel {
  DepthKernel kernel = DepthKernel::ridge;
  double lambda = 1e-3;
  std::vector<RunCoefficients> runs;
  // w with prediction(depth) = sum_i w_i value_i, for any value of each run.
  std::vector<double> weights(double depth) const;
  LossParams predict(double depth) const;
};

// Needs at least two runs of different depths.
DepthModel fit_depth_model(const std::vector<RunCoefficients>& runs, DepthKernel kernel, double lambda = 1e-3);

// Leave-one-out: each run's coefficients predicted from the others.
std::vector<LossParams> leave_one_out(const std::vector<RunCoefficients>& runs, DepthKernel kernel,
                                      double lambda = 1e-3);

}  // namespace octet
