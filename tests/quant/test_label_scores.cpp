// Pixel accuracy and mean IoU of a segmentation's masks (evaluate/label_scores.h),
// by hand, and which labels fit which models.
#include <gtest/gtest.h>

#include "data/npy.h"
#include "evaluate/label_scores.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

TEST(LabelScores, PixelAccuracyAndMeanIouByHand) {
  LabelScores scores(4);  // class 3: neither labelled nor predicted, left out of the mean
  const std::vector<std::pair<int32_t, int64_t>> label_and_prediction = {
      {0, 0}, {0, 1}, {1, 1}, {1, 1}, {2, 0}, {kUnlabelledPixel, 2}};
  for (const auto& [label, predicted] : label_and_prediction) scores.add(label, predicted);
  EXPECT_EQ(scores.labelled(), 5);
  EXPECT_DOUBLE_EQ(scores.top1(), 60.0);
  // IoU: class 0, 1 of the 3 pixels labelled or predicted 0; class 1, 2 of 3; class 2, 0 of 1.
  EXPECT_DOUBLE_EQ(scores.mean_iou(), 100.0 * (1.0 / 3 + 2.0 / 3 + 0.0) / 3);
}

TEST(LabelScores, NothingLabelledScoresZero) {
  LabelScores scores(2);
  scores.add(kUnlabelledPixel, 1);
  EXPECT_EQ(scores.labelled(), 0);
  EXPECT_EQ(scores.top1(), 0.0);
  EXPECT_EQ(scores.mean_iou(), 0.0);
}

Dataset labelled_by(int64_t height, int64_t width) {
  Dataset d;
  d.name = "masks.npy";
  d.label_height = height, d.label_width = width;
  d.labels.assign(static_cast<size_t>(height * width), 0);
  return d;
}

TEST(LabelScores, MasksFitOnlyAnImageOfLogitsOfTheirSize) {
  const ActShape image{5, 4, 6}, vector{5, 1, 1};
  EXPECT_EQ(error_of([&] { check_labels_fit(labelled_by(4, 6), image, "'m'"); }), "no error");
  EXPECT_EQ(error_of([&] { check_labels_fit(labelled_by(1, 1), vector, "'m'"); }), "no error");
  EXPECT_EQ(error_of([&] { check_labels_fit(Dataset{}, image, "'m'"); }), "no error");  // no labels: agreement only
  EXPECT_NE(error_of([&] { check_labels_fit(labelled_by(6, 4), image, "'m'"); })
                .find("masks.npy: its masks are 6 x 4 pixels, and 'm' predicts 4 x 6 per image"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_labels_fit(labelled_by(1, 1), image, "'m'"); })
                .find("its labels name a class per image, and 'm' returns an image of 5x4x6 logits: give a mask per "
                      "image (N x 4 x 6, 255 where a pixel has no label)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_labels_fit(labelled_by(4, 6), vector, "'m'"); })
                .find("its labels are masks of 4 x 6 pixels, and 'm' predicts a class per image"),
            std::string::npos);
}

}  // namespace
}  // namespace octet
