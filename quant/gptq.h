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

// The input statistics H = sum x x^T of every conv and linear (one per channel
// group of a grouped or depthwise conv, over that group's input channels: its
// output channels read nothing else) over the first `count` calibration images, fed the float activations batch by batch (by
// the calibration pass, so that GPTQ needs no float pass of its own).
class GptqStatistics {
 public:
  GptqStatistics(const FloatExecutor& executor, int64_t count);
  int64_t count() const { return count_; }
  // Node `producer`'s activation for images [first, first + batch): the rows of
  // the images below count() go to every layer that reads it. Batches must
  // come in order and start at the same images on every call sequence (the
  // subsampling of rows depends on where a batch starts).
  void add(int producer, const FloatTensor& activation, int64_t first);
  // Int8 weights (torch layout) of every conv and linear, given each layer's
  // per-output-channel scales.
  std::map<std::string, Int8Tensor> round(const FloatModel& folded,
                                          const std::map<std::string, FloatTensor>& scales) const;

 private:
  Graph graph_;
  std::vector<ActShape> shapes_;
  int64_t count_;
  // Per node, per channel group: the lower triangle; empty for nodes without weights.
  std::vector<std::vector<Eigen::MatrixXf>> hessians_;
};

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One layer: quantizes W [O][K] (NHWC reading order) in place to int8 levels
// (returned) with per-row `scale`, compensating errors through the inverse of
// H [K][K] (damped here). When H cannot be factorised, the layer falls back to
// round-to-nearest with a warning naming `layer` on stderr.
Int8Tensor gptq_round_layer(RowMatrixD& W, const std::vector<float>& scale, Eigen::MatrixXd H,
                            const std::string& layer);

// Its rounding, given U, the upper Cholesky factor of H^-1, row-major [K][K]
// (without `compensate`, round to nearest): each weight rounded in column
// order, its error divided by U's diagonal and spread over the row's later
// columns through U's row. Exposed for tests.
Int8Tensor gptq_round_with_factor(RowMatrixD& W, const std::vector<float>& scale, const double* U, bool compensate);

}  // namespace octet
