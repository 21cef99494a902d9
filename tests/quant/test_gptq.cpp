// GPTQ's rounding of one layer. Its factorisation of the layer's input
// statistics H (in place, blocked) must give the paper's algorithm's levels.
// When H cannot be factorised even after damping (degenerate or overflowing
// inputs give NaN or a matrix that is not positive definite in floating
// point), the layer is rounded to nearest with a warning naming it, instead of
// failing or writing garbage.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "quant/gptq.h"

namespace octet {
namespace {

constexpr int64_t kO = 4, kK = 12;

RowMatrixD random_weights() {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> d(0.0, 0.3);
  RowMatrixD W(kO, kK);
  for (int64_t i = 0; i < W.size(); ++i) W.data()[i] = d(rng);
  return W;
}

// Round-to-nearest levels of W at `scale`.
std::vector<int8_t> nearest(const RowMatrixD& W, float scale) {
  std::vector<int8_t> out;
  for (int64_t i = 0; i < W.size(); ++i)
    out.push_back(static_cast<int8_t>(std::clamp(std::round(W.data()[i] * scale), -128.0, 127.0)));
  return out;
}

struct Rounded {
  std::vector<int8_t> levels;
  std::string warnings;
};

Rounded round_with(const Eigen::MatrixXd& H) {
  RowMatrixD W = random_weights();
  ::testing::internal::CaptureStderr();
  const Int8Tensor q = gptq_round_layer(W, std::vector<float>(kO, 100.0f), H, "layer3.1.conv2");
  return {q.data, ::testing::internal::GetCapturedStderr()};
}

TEST(GptqFallback, AnUnfactorisableLayerIsRoundedToNearestWithAWarning) {
  const std::vector<int8_t> expected = nearest(random_weights(), 100.0f);
  Eigen::MatrixXd nan_h = Eigen::MatrixXd::Identity(kK, kK);
  nan_h(2, 5) = nan_h(5, 2) = std::numeric_limits<double>::quiet_NaN();  // overflowing inputs
  Eigen::MatrixXd inf_h = Eigen::MatrixXd::Identity(kK, kK);
  inf_h(3, 3) = std::numeric_limits<double>::infinity();
  // Indefinite, as rounding can leave a nearly singular H.
  Eigen::MatrixXd indefinite = Eigen::MatrixXd::Ones(kK, kK);
  indefinite(0, 1) = indefinite(1, 0) = 1e6;
  for (const Eigen::MatrixXd& H : {nan_h, inf_h, indefinite}) {
    const Rounded r = round_with(H);
    EXPECT_EQ(r.levels, expected);
    EXPECT_NE(r.warnings.find("warning: gptq: layer 'layer3.1.conv2': the statistics of its inputs cannot be "
                              "factorised (even damped); its weights are rounded to nearest"),
              std::string::npos)
        << r.warnings;
  }
}

TEST(GptqFallback, AFactorisableLayerIsCompensatedWithoutWarning) {
  // Correlated inputs: GPTQ moves some weights off their nearest level.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> d(0.0, 1.0);
  Eigen::MatrixXd X(64, kK);
  for (int64_t i = 0; i < X.size(); ++i) X.data()[i] = d(rng);
  X.col(1) = X.col(0) + 0.1 * X.col(1);
  const Rounded r = round_with(X.transpose() * X);
  EXPECT_EQ(r.warnings, "");
  EXPECT_NE(r.levels, nearest(random_weights(), 100.0f));
}

// GPTQ as its paper writes it: U = chol(H^-1) upper, from an explicit inverse;
// each column's error is spread over the columns after it.
std::vector<int8_t> textbook_gptq(RowMatrixD W, double scale, Eigen::MatrixXd H) {
  const double damp = 0.01 * H.diagonal().mean();
  H.diagonal().array() += damp;
  const Eigen::MatrixXd inverse = H.llt().solve(Eigen::MatrixXd::Identity(H.rows(), H.cols()));
  const Eigen::MatrixXd U = inverse.llt().matrixU();
  std::vector<int8_t> levels(W.size());
  for (int64_t k = 0; k < W.cols(); ++k)
    for (int64_t o = 0; o < W.rows(); ++o) {
      const double level = std::clamp(std::round(W(o, k) * scale), -128.0, 127.0);
      levels[o * W.cols() + k] = static_cast<int8_t>(level);
      const double err = (W(o, k) - level / scale) / U(k, k);
      for (int64_t j = k + 1; j < W.cols(); ++j) W(o, j) -= err * U(k, j);
    }
  return levels;
}

TEST(Gptq, BlockedFactorisationMatchesTheTextbookAlgorithm) {
  // K spans several of the triangular inverse's 128-column blocks, the last one partial.
  constexpr int64_t O = 8, K = 300, rows = 2000;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> d(0.0, 1.0);
  Eigen::MatrixXd X(rows, K);
  for (int64_t i = 0; i < X.size(); ++i) X.data()[i] = d(rng);
  X.rightCols(K - 1) += 0.5 * X.leftCols(K - 1);  // correlated inputs, as neighbouring pixels are
  const Eigen::MatrixXd H = X.transpose() * X;
  RowMatrixD W(O, K);
  for (int64_t i = 0; i < W.size(); ++i) W.data()[i] = 0.2 * d(rng);
  const std::vector<int8_t> expected = textbook_gptq(W, 300.0, H);
  RowMatrixD work = W;
  const Int8Tensor q = gptq_round_layer(work, std::vector<float>(O, 300.0f), H, "conv");
  int64_t differing = 0;
  for (int64_t i = 0; i < W.size(); ++i) differing += q.data[i] != expected[i];
  // Rounding differs only where a weight sits within rounding noise of a half level.
  EXPECT_LE(differing, 2) << "of " << W.size();
  int64_t moved = 0;  // and compensation did act
  for (int64_t i = 0; i < W.size(); ++i) moved += q.data[i] != static_cast<int8_t>(std::round(W.data()[i] * 300.0));
  EXPECT_GT(moved, W.size() / 10);
}

// The update as the paper writes it, one weight row and one column at a time:
// the row's later columns each take one fused multiply-add per earlier column.
Int8Tensor row_by_row(RowMatrixD& W, const std::vector<float>& scale, const std::vector<double>& U) {
  const int64_t O = W.rows(), K = W.cols();
  Int8Tensor q({O, K});
  for (int64_t o = 0; o < O; ++o)
    for (int64_t k = 0; k < K; ++k) {
      const double s = scale[o], w = W(o, k);
      const double level = std::clamp(std::round(w * s), -128.0, 127.0);
      q.data[o * K + k] = static_cast<int8_t>(level);
      const double err = (w - level / s) / U[k * K + k];
      for (int64_t j = k + 1; j < K; ++j) W(o, j) = std::fma(-err, U[k * K + j], W(o, j));
    }
  return q;
}

TEST(Gptq, BlockedUpdateGivesTheBitsOfTheRowByRowUpdate) {
  // Rows past one block, columns past two steps and a partial panel; scales
  // that leave weights near half levels, where a changed sum shows.
  constexpr int64_t O = 70, K = 203;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<double> U(K * K, 0.0);
  for (int64_t k = 0; k < K; ++k) {
    U[k * K + k] = 1.0 + std::abs(d(rng));
    for (int64_t j = k + 1; j < K; ++j) U[k * K + j] = 0.3 * d(rng);
  }
  RowMatrixD W(O, K);
  for (int64_t i = 0; i < W.size(); ++i) W.data()[i] = 0.3 * d(rng);
  std::vector<float> scale(O);
  for (int64_t o = 0; o < O; ++o) scale[o] = 50.0f + static_cast<float>(o);
  RowMatrixD want_w = W, got_w = W;
  const Int8Tensor want = row_by_row(want_w, scale, U);
  const Int8Tensor got = gptq_round_with_factor(got_w, scale, U.data(), true);
  EXPECT_EQ(got.data, want.data);
  int64_t same = 0;  // every updated weight, bit for bit
  for (int64_t i = 0; i < W.size(); ++i) same += std::memcmp(&got_w.data()[i], &want_w.data()[i], sizeof(double)) == 0;
  EXPECT_EQ(same, W.size());
}

}  // namespace
}  // namespace octet
