// GPTQ weight rounding (Frantar et al., 2022). Instead of rounding each weight
// to the nearest int8 level, a layer's weights are quantized one input column
// at a time and each column's rounding error is compensated in the columns not
// yet quantized, using H = sum x x^T over the layer's calibration inputs: the
// choice that keeps the layer's outputs (W x) closest to float. The scales
// are not changed, only which level each weight rounds to.
#pragma once

#include <Eigen/Core>
#include <map>
#include <string>

#include "graph/float_executor.h"

namespace octet {

// Int8 weights (torch layout) of every conv and linear, given each layer's
// per-output-channel scales, from `count` calibration images (NCHW).
std::map<std::string, Int8Tensor> gptq_round(const FloatModel& folded,
                                             const std::map<std::string, FloatTensor>& scales,
                                             const std::vector<float>& images, int64_t count);

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One layer: quantizes W [O][K] (NHWC reading order) in place to int8 levels
// (returned) with per-row `scale`, compensating errors through the inverse of
// H [K][K] (damped here). When H cannot be factorised, the layer falls back to
// round-to-nearest with a warning naming `layer` on stderr.
Int8Tensor gptq_round_layer(RowMatrixD& W, const std::vector<float>& scale, Eigen::MatrixXd H,
                            const std::string& layer);

}  // namespace octet
