#include "evaluate/label_scores.h"

#include "common/error.h"
#include "data/npy.h"

namespace octet {

void check_labels_fit(const Dataset& test, const ActShape& output, const std::string& model_name) {
  if (!test.labelled()) return;
  const std::string masks = std::to_string(test.label_height) + " x " + std::to_string(test.label_width);
  if (output.h == 1 && output.w == 1) {
    check(test.labels_per_image() == 1, test.name + ": its labels are masks of " + masks + " pixels, and " +
                                            model_name + " predicts a class per image");
    return;
  }
  check(test.labels_per_image() > 1, test.name + ": its labels name a class per image, and " + model_name +
                                         " returns an image of " + to_string(output) +
                                         " logits: give a mask per image (N x " + std::to_string(output.h) + " x " +
                                         std::to_string(output.w) + ", 255 where a pixel has no label)");
  check(test.label_height == output.h && test.label_width == output.w,
        test.name + ": its masks are " + masks + " pixels, and " + model_name + " predicts " +
            std::to_string(output.h) + " x " + std::to_string(output.w) + " per image");
}

LabelScores::LabelScores(int64_t classes)
    : right_(static_cast<size_t>(classes)),
      labelled_as_(static_cast<size_t>(classes)),
      predicted_as_(static_cast<size_t>(classes)) {}

void LabelScores::add(int32_t label, int64_t predicted) {
  if (label == kUnlabelledPixel) return;
  ++labelled_;
  ++labelled_as_[static_cast<size_t>(label)];
  ++predicted_as_[static_cast<size_t>(predicted)];
  if (predicted == label) ++correct_, ++right_[static_cast<size_t>(label)];
}

double LabelScores::top1() const {
  return labelled_ == 0 ? 0.0 : 100.0 * static_cast<double>(correct_) / static_cast<double>(labelled_);
}

double LabelScores::mean_iou() const {
  double sum = 0;
  int64_t classes = 0;
  for (size_t c = 0; c < right_.size(); ++c) {
    const int64_t either = labelled_as_[c] + predicted_as_[c] - right_[c];
    if (either == 0) continue;  // neither labelled nor predicted: no IoU (mmsegmentation's nanmean)
    sum += static_cast<double>(right_[c]) / static_cast<double>(either);
    ++classes;
  }
  return classes == 0 ? 0.0 : 100.0 * sum / static_cast<double>(classes);
}

}  // namespace octet
