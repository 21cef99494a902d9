// `auto` stops a candidate as soon as its partial KL sum shows it cannot win
// and runs each candidate only from the point it changes. Neither may change
// the choice: it must be what brute force chooses (every candidate built into
// the whole model and scored on every image, then the same shortlist and
// trailing rules applied to the sums), amax and method at every point.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"
#include "quant/auto_amax.h"
#include "quant/pipeline.h"
#include "quant/scored_images.h"
#include "tests/quant/differing_points.h"
#include "tests/support/random_model.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// How many points brute force moved off the provisional mse amax: a search
// that kept every provisional amax would agree with any other for nothing.
int64_t points_moved_off_mse(const QuantizedModel& m) {
  return std::count_if(m.quant.begin(), m.quant.end(),
                       [](const NodeQuant& q) { return q.method == "max" || q.method == "percentile" || q.method == "entropy"; });
}

TEST(AutoAmax, ScoresTheLeastConfidentImagesFirst) {
  // Four images of three classes: sure (row 0), torn between two classes
  // (row 1), undecided (row 2, the most sensitive), fairly sure (row 3).
  FloatTensor logits({4, 3});
  const float rows[4][3] = {{9, 0, 0}, {2, 2, -5}, {0, 0, 0}, {3, 0, 0}};
  std::copy(&rows[0][0], &rows[0][0] + 12, logits.ptr());
  EXPECT_EQ(most_sensitive_images(logits, 4), (std::vector<int64_t>{2, 1, 3, 0}));
  EXPECT_EQ(most_sensitive_images(logits, 2), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(most_sensitive_images(logits, 9).size(), 4u);
}

// An image of logits (a segmentation's, [N][H][W][classes]): an image's
// sensitivity and KL are its pixels' summed.
TEST(AutoAmax, ScoresAnImageOfLogitsByItsPixelsSummed) {
  FloatTensor logits({2, 1, 2, 3});  // image 0: sure, fairly sure; image 1: torn, undecided
  const float values[12] = {9, 0, 0, 3, 0, 0, 2, 2, -5, 0, 0, 0};
  std::copy(values, values + 12, logits.ptr());
  EXPECT_EQ(most_sensitive_images(logits, 2), (std::vector<int64_t>{1, 0}));
  const float other[12] = {8, 1, 0, 3, 0, 1, 2, 0, -5, 0, 1, 0};
  double by_pixel[4], by_image[2];
  softmax_kl(logits.ptr(), other, 4, 3, 3, by_pixel);
  softmax_kl(logits.ptr(), other, 2, 6, 3, by_image);
  EXPECT_GT(by_pixel[0], 0);
  EXPECT_NEAR(by_image[0], by_pixel[0] + by_pixel[1], 1e-12);
  EXPECT_NEAR(by_image[1], by_pixel[2] + by_pixel[3], 1e-12);
}

// The amaxes and methods of a point's scored candidates.
std::vector<std::pair<double, std::string>> listed(const std::vector<AmaxCandidate>& candidates) {
  std::vector<std::pair<double, std::string>> out;
  for (const AmaxCandidate& c : candidates) out.emplace_back(c.amax, amax_method_name(c.method));
  return out;
}

TEST(AutoAmax, ScoresMseFirstAndOnlyCandidatesNearIt) {
  using Listed = std::vector<std::pair<double, std::string>>;
  // Max 2x mse's amax (a step twice as coarse) is not scored.
  EXPECT_EQ(listed(scored_candidates({{2.0, AmaxMethod::Max},
                                      {0.9, AmaxMethod::Percentile},
                                      {1.2, AmaxMethod::Entropy},
                                      {1.0, AmaxMethod::Mse}})),
            (Listed{{1.0, "mse"}, {0.9, "percentile"}, {1.2, "entropy"}}));
  // Percentile at 0.5x (clipping half the range) is not scored, nor entropy within rounding of mse.
  EXPECT_EQ(listed(scored_candidates({{1.35, AmaxMethod::Max},
                                      {0.5, AmaxMethod::Percentile},
                                      {1.00001, AmaxMethod::Entropy},
                                      {1.0, AmaxMethod::Mse}})),
            (Listed{{1.0, "mse"}, {1.35, "max"}}));
  // The window's edges are in it.
  EXPECT_EQ(scored_candidates({{1.4, AmaxMethod::Max}, {0.6, AmaxMethod::Percentile}, {1.0, AmaxMethod::Mse}}).size(), 3u);
  EXPECT_THROW(scored_candidates({{1.0, AmaxMethod::Max}}), Error);
}

TEST(AutoAmax, DropsFinalistsTrailingByMoreThanATenthOfTheRest) {
  // The incumbent scored 10 on the shortlist and 4 on the rest: a finalist at 10.5 would need to score
  // 0.5 (12.5%) below it there, one at 10.3 only 0.3.
  EXPECT_TRUE(trails_too_far(10.5, 10, 4));
  EXPECT_FALSE(trails_too_far(10.3, 10, 4));
  EXPECT_FALSE(trails_too_far(9.0, 10, 4));
  // Nothing after the shortlist: any finalist behind the incumbent cannot win.
  EXPECT_TRUE(trails_too_far(10.001, 10, 0));
  EXPECT_FALSE(trails_too_far(10, 10, 0));
}

TEST(AutoAmax, PrunedSearchChoosesWhatBruteForceChoosesOnRandomResNet) {
  // Residual adds fused into convs, so candidates resume after decided outputs.
  const Checkpoint c = random_checkpoint("resnet20", ModelOptions{3, 8, 8, 10, true}, 11);
  QuantizeOptions o;
  o.weight_rounding = "nearest";
  o.auto_samples = 288;  // nine chunks of 32: past the 256-image shortlist, so finalists race on
  QuantizeOptions brute = o;
  brute.exhaustive_auto = true;
  const QuantizedModel pruned = quantize_random(c, o, 288, 5);
  const QuantizedModel exhaustive = quantize_random(c, brute, 288, 5);
  EXPECT_EQ(differing_points(pruned, exhaustive), std::vector<std::string>{});
  EXPECT_GT(points_moved_off_mse(exhaustive), 0);
}

TEST(AutoAmax, PrunedSearchChoosesWhatBruteForceChoosesOnZooLeNet) {
  const std::string path = zoo_checkpoint("lenet5_fmnist");
  if (!path_exists(fashion_mnist_dir())) GTEST_SKIP() << "Fashion-MNIST is not installed (dataset-fashion-mnist)";
  const Checkpoint checkpoint = load_checkpoint(path);
  QuantizeOptions o;
  o.auto_samples = 512;
  QuantizeOptions brute = o;
  brute.exhaustive_auto = true;
  const QuantizedModel pruned = quantize_checkpoint(checkpoint, fashion_mnist_dir(), o, 512).model;
  const QuantizedModel exhaustive = quantize_checkpoint(checkpoint, fashion_mnist_dir(), brute, 512).model;
  EXPECT_EQ(differing_points(pruned, exhaustive), std::vector<std::string>{});
  EXPECT_GT(points_moved_off_mse(exhaustive), 0);
}

}  // namespace
}  // namespace octet
