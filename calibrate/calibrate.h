// The calibration pass: runs the float inference graph over calibration images
// and records, at the output of every node, the statistics amax is chosen from.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/histogram.h"
#include "data/dataset.h"
#include "graph/float_executor.h"

namespace octet {

struct Calibration {
  std::vector<TensorStats> stats;  // one per node of the inference graph
  int64_t samples = 0;
  std::vector<float> images;  // the calibration images, NCHW normalised (auto reuses them)
};

// `samples` images of `data` at evenly spaced indices (deterministic, all classes).
std::vector<int64_t> calibration_indices(const Dataset& data, int64_t samples);

// Records statistics over the images (NCHW, normalised); shows progress.
Calibration calibrate(const FloatExecutor& executor, std::vector<float> images, int64_t count,
                      int64_t batch_size = 128);

}  // namespace octet
