// How predictions score against a test set's labels: top-1 (the share of
// images, or of a segmentation's labelled pixels, predicted right) and, for
// masks, the mean intersection over union of the classes, as segmentation
// benchmarks report it (pixels without a label count for neither).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "graph/graph.h"

namespace octet {

// Fails unless `test`'s labels fit a model `model_name` returning `output`
// logits: a class per image for a vector of logits, an H x W mask for an image
// of them.
void check_labels_fit(const Dataset& test, const ActShape& output, const std::string& model_name);

class LabelScores {
 public:
  explicit LabelScores(int64_t classes);

  // One prediction, and its label (kUnlabelledPixel: not counted).
  void add(int32_t label, int64_t predicted);

  int64_t labelled() const { return labelled_; }
  double top1() const;  // percent of the labelled predictions; 0 without any
  // Percent: the mean over classes labelled or predicted of |both| / |either|.
  double mean_iou() const;

 private:
  std::vector<int64_t> right_, labelled_as_, predicted_as_;  // per class
  int64_t labelled_ = 0, correct_ = 0;
};

}  // namespace octet
