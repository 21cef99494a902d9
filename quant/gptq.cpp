#include "quant/gptq.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "common/progress.h"
#include "graph/layout.h"
#include "graph/op_traits.h"

namespace octet {

namespace {
using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A layer's H is estimated from at most this many input rows (patches), spread evenly.
constexpr int64_t kMaxRows = 32768;
constexpr int64_t kRowsPerChunk = 2048;
// Weight rows GPTQ rounds together.
constexpr int64_t kRowsPerBlock = 16;
// Dampening added to H's diagonal, relative to its mean (GPTQ's default).
constexpr double kDamp = 0.01;

// The upper Cholesky factor U of H^-1 (H^-1 = U^T U), or nothing when H, even
// damped, is not positive definite in floating point (degenerate or
// overflowing inputs; Eigen's LLT lets NaN through, hence the finiteness test).
// With J the order reversal and J H J = M M^T, U = J M^-1 J: one Cholesky
// factorisation and one triangular inverse, without forming H^-1.
std::optional<RowMatrixD> inverse_cholesky(const Eigen::MatrixXd& H) {
  if (!H.allFinite()) return std::nullopt;
  const Eigen::LLT<Eigen::MatrixXd> llt(H.reverse());
  if (llt.info() != Eigen::Success) return std::nullopt;
  Eigen::MatrixXd M_inv = Eigen::MatrixXd::Identity(H.rows(), H.cols());
  llt.matrixL().solveInPlace(M_inv);
  RowMatrixD U = M_inv.reverse();
  U.triangularView<Eigen::StrictlyLower>().setZero();
  if (!U.allFinite() || (U.diagonal().array() <= 0).any()) return std::nullopt;
  return U;
}
}  // namespace

Int8Tensor gptq_round_layer(RowMatrixD& W, const std::vector<float>& scale, Eigen::MatrixXd H,
                            const std::string& layer) {
  const int64_t O = W.rows(), K = W.cols();
  const double damp = kDamp * std::max(H.diagonal().mean(), 1e-12);
  for (int64_t k = 0; k < K; ++k) {
    if (H(k, k) == 0) H(k, k) = 1;  // an input that is always zero: its weights do not matter
    H(k, k) += damp;
  }
  const std::optional<RowMatrixD> factor = inverse_cholesky(H);
  if (!factor)
    std::fprintf(stderr,
                 "warning: gptq: layer '%s': the statistics of its inputs cannot be factorised (even damped); "
                 "its weights are rounded to nearest\n",
                 layer.c_str());
  // Without a factor no error is compensated: each weight rounds to nearest.
  const RowMatrixD U = factor.value_or(RowMatrixD());
  const bool compensate = factor.has_value();
  Int8Tensor q({O, K});
  // Rows in blocks that share each row of U while it is in cache; every
  // weight sees the same updates in the same order as row by row.
#pragma omp parallel for schedule(dynamic)
  for (int64_t first = 0; first < O; first += kRowsPerBlock) {
    const int64_t end = std::min(O, first + kRowsPerBlock);
    for (int64_t k = 0; k < K; ++k) {
      const double* u = U.data() + k * K;
      for (int64_t o = first; o < end; ++o) {
        const double s = scale[o], w = W(o, k);
        const double level = std::clamp(std::round(w * s), -128.0, 127.0);
        q.data[o * K + k] = static_cast<int8_t>(level);
        if (!compensate) continue;
        const double err = (w - level / s) / u[k];
        double* row = W.data() + o * K;
        for (int64_t j = k + 1; j < K; ++j) row[j] -= err * u[j];
      }
    }
  }
  return q;
}

GptqStatistics::GptqStatistics(const FloatExecutor& executor, int64_t count)
    : graph_(executor.graph()), shapes_(executor.shapes()), count_(count), hessians_(graph_.nodes.size()) {}

void GptqStatistics::add(int producer, const FloatTensor& act, int64_t first) {
  const int64_t n = std::min(act.dim(0), count_ - first);
  if (n <= 0) return;
  for (size_t i = static_cast<size_t>(producer) + 1; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    if (!op_traits(node.op).weighted || node.inputs[0] != producer) continue;
    const ActShape in = shapes_[producer], out = shapes_[i];
    const int64_t K = patch_size(node, in), rows = patch_rows(node, out, n);
    const int64_t total_rows = patch_rows(node, out, count_);
    const int64_t stride = std::max<int64_t>(1, total_rows / kMaxRows);
    Eigen::MatrixXf& H = hessians_[i];
    if (H.size() == 0) H = Eigen::MatrixXf::Zero(K, K);
    RowMatrixF chunk(kRowsPerChunk, K);
    int64_t filled = 0;
    const int64_t offset = patch_rows(node, out, first);
    for (int64_t r = (stride - offset % stride) % stride; r < rows; r += stride) {
      gather_patches(node, in, out, act.ptr(), r, 1, chunk.data() + filled * K);
      if (++filled == kRowsPerChunk) {
        H.noalias() += chunk.transpose() * chunk;
        filled = 0;
      }
    }
    if (filled) H.noalias() += chunk.topRows(filled).transpose() * chunk.topRows(filled);
  }
}

std::map<std::string, Int8Tensor> GptqStatistics::round(const FloatModel& folded,
                                                        const std::map<std::string, FloatTensor>& scales) const {
  std::map<std::string, Int8Tensor> out;
  Progress rounding("gptq: rounding", static_cast<int64_t>(graph_.nodes.size()));
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    rounding.advance();
    const Node& node = graph_.nodes[i];
    if (!op_traits(node.op).weighted) continue;
    const FloatTensor& w = folded.weight(node);
    const FloatTensor nhwc = nhwc_weight(graph_, shapes_, static_cast<int>(i), w);
    RowMatrixD W = Eigen::Map<const RowMatrixF>(nhwc.ptr(), nhwc.dim(0), nhwc.dim(1)).cast<double>();
    const Int8Tensor levels = gptq_round_layer(W, scales.at(node.name).data, hessians_[i].cast<double>(), node.name);
    out[node.name] = torch_weight(graph_, shapes_, static_cast<int>(i), levels, w.shape);
  }
  return out;
}

}  // namespace octet
