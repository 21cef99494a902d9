// Measured tile choice for cuda-imma, as TensorRT picks tactics and cuDNN's
// benchmark mode picks algorithms: for each distinct convolution shape, every
// tile configuration that can run it (split K or whole, implicit_gemm.h
// TileLaunch) is timed once on the device and the fastest is kept. Every tile
// computes the same integer sums, so the choice changes speed only, never the
// bits. Host code; the engine supplies the
// timing (conv2d_imma launches), the tests a fake one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda/implicit_gemm.h"

namespace octet::cuda::igemm {

// One timed candidate.
struct TileTrial {
  TileLaunch launch;
  double milliseconds;
};

// A shape the tuner has decided: its candidates' fastest times (empty when
// there was only one candidate), the chosen tile, and the wall time its
// timing took (what tuning adds to the first run of a batch size).
struct TunedShape {
  Problem problem;
  TileLaunch launch;
  std::vector<TileTrial> trials;
  double tuning_milliseconds = 0;
};

std::string describe(const Problem& p);  // "256x32x32x64 -> 64, 3x3 stride 1"

class TileTuner {
 public:
  // Milliseconds of one launch of `launch` on the shape being tuned.
  using Measure = std::function<double(const TileLaunch& launch)>;

  // Each candidate is measured in kRounds rounds over all of them, its
  // fastest time counting: a GPU whose clocks are still rising when tuning
  // starts would otherwise make the candidates timed first look slow.
  static constexpr int kRounds = 2;

  // The launch for `p`: the one decided before for an equal problem, else the
  // fastest of `candidates` by `measure` (ties and unusable times, <= 0 or
  // not finite, go to the earlier candidate), remembered. One candidate is
  // not measured. `candidates` must not be empty.
  TileLaunch choose(const Problem& p, const std::vector<TileLaunch>& candidates, const Measure& measure);

  const std::vector<TunedShape>& decided() const { return decided_; }

 private:
  std::vector<TunedShape> decided_;
};

}  // namespace octet::cuda::igemm
