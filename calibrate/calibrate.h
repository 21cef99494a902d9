// The calibration pass: runs the float inference graph over calibration images
// and records, at the output of every node, the statistics amax is chosen from.
#pragma once

#include <cstdint>
#include <functional>
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

// `samples` images of a split of `size` at evenly spaced indices (deterministic, all classes).
std::vector<int64_t> calibration_indices(int64_t size, int64_t samples);

// Sees every node's float activation of a batch that starts at image `first`:
// what else the quantizer takes from the same pass.
using BatchObserver = std::function<void(int node, const FloatTensor& activation, int64_t first)>;

// Records statistics over the images (NCHW, normalised), showing progress, and
// hands every activation to `also` when given.
Calibration calibrate(const FloatExecutor& executor, std::vector<float> images, int64_t count,
                      int64_t batch_size = 128, const BatchObserver& also = {});

}  // namespace octet
