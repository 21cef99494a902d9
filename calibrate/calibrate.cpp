#include "calibrate/calibrate.h"

#include <algorithm>

#include "common/error.h"
#include "common/progress.h"

namespace octet {

std::vector<int64_t> calibration_indices(int64_t size, int64_t samples) {
  check(samples > 0, "the calibration set is empty (--calib-samples must be positive)");
  check(size > 0, "the calibration dataset has no images");
  samples = std::min(samples, size);
  std::vector<int64_t> indices(static_cast<size_t>(samples));
  for (int64_t i = 0; i < samples; ++i) indices[i] = i * size / samples;
  return indices;
}

Calibration calibrate(const FloatExecutor& executor, std::vector<float> images, int64_t count, int64_t batch_size,
                      const BatchObserver& also) {
  check(count > 0, "the calibration set is empty");
  const Graph& g = executor.graph();
  const int64_t image_numel = executor.shapes()[0].numel();
  check(static_cast<int64_t>(images.size()) == count * image_numel, "calibration images have the wrong size");
  Calibration result;
  result.stats.resize(g.nodes.size());
  result.samples = count;
  Progress progress("calibrating", count);
  for (int64_t first = 0; first < count; first += batch_size) {
    const int64_t n = std::min(batch_size, count - first);
    executor.run(images.data() + first * image_numel, n, [&](int node, const FloatTensor& act) {
      result.stats[node].add(act.ptr(), act.numel(), "calibration of node '" + g.nodes[node].name + "'");
      if (also) also(node, act, first);
    });
    progress.advance(n);
  }
  result.images = std::move(images);
  return result;
}

}  // namespace octet
