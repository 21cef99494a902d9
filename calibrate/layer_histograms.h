// The course lab's view of a network: for every layer, the histogram and range
// of its weights and of its output activations, with the 3-sigma range
// (mean +- 3 std) next to the total range (min, max).
#pragma once

#include <string>
#include <vector>

#include "calibrate/calibrate.h"

namespace octet {

struct Histogram {
  double lo = 0, hi = 0;  // bins split [lo, hi] evenly
  std::vector<int64_t> counts;
};

Histogram histogram_of(const float* values, int64_t count, double lo, double hi, int bins);

struct LayerHistogram {
  std::string name, op;
  std::string kind;  // "weight" or "activation"
  double min = 0, max = 0, mean = 0, std = 0;
  Histogram histogram;
};

// Weights of every conv and linear of the inference graph (batch norm folded in).
std::vector<LayerHistogram> weight_histograms(const FloatModel& model, int bins);
// The input and every conv, linear, add and pool output on the calibration images.
std::vector<LayerHistogram> activation_histograms(const FloatExecutor& executor, const Calibration& calibration,
                                                  int bins);

}  // namespace octet
