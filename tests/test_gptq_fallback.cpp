// GPTQ needs the Cholesky factor of its layer's input statistics H. When H
// cannot be factorised even after damping (degenerate or overflowing inputs
// give NaN or a matrix that is not positive definite in floating point), the
// layer is rounded to nearest with a warning naming it, instead of failing or
// writing garbage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

}  // namespace
}  // namespace octet
