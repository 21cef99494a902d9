// Regression of the loss model's coefficients across runs, over model depth (the
// Optimus lab: predict ResNet-50's curve from ResNet-18/20/32/44/56). b0, which
// spans decades between runs, is regressed on its logarithm (predictions stay
// positive); b1 and b2 as they are (b1 often sits at its bound near zero, where
// a logarithm would blow up), clamped to b >= 0.
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
DepthKernel parse_depth_kernel(const std::string& name);
const char* depth_kernel_name(DepthKernel kernel);

struct DepthModel {
  DepthKernel kernel = DepthKernel::ridge;
  double lambda = 1e-3;
  std::vector<RunCoefficients> runs;
  LossParams predict(double depth) const;
};

// Needs at least two runs of different depths.
DepthModel fit_depth_model(const std::vector<RunCoefficients>& runs, DepthKernel kernel, double lambda = 1e-3);

// Leave-one-out: each run's coefficients predicted from the others.
std::vector<LossParams> leave_one_out(const std::vector<RunCoefficients>& runs, DepthKernel kernel,
                                      double lambda = 1e-3);

}  // namespace octet
