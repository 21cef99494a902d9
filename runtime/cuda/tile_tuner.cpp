#include "runtime/cuda/tile_tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"

namespace octet::cuda::igemm {

namespace {

bool same_problem(const Problem& a, const Problem& b) {
  return a.batch == b.batch && a.in_h == b.in_h && a.in_w == b.in_w && a.in_stride == b.in_stride &&
         a.tap_c == b.tap_c && a.out_h == b.out_h && a.out_w == b.out_w && a.out_c == b.out_c && a.kernel == b.kernel &&
         a.stride == b.stride && a.padding == b.padding;
}

}  // namespace

std::string describe(const Problem& p) {
  const auto s = [](int v) { return std::to_string(v); };
  return s(p.batch) + "x" + s(p.in_h) + "x" + s(p.in_w) + "x" + s(p.tap_c) + " -> " + s(p.out_c) + ", " + s(p.kernel) +
         "x" + s(p.kernel) + " stride " + s(p.stride);
}

TileLaunch TileTuner::choose(const Problem& p, const std::vector<TileLaunch>& candidates, const Measure& measure) {
  check(!candidates.empty(), "cuda-imma tile tuner: no candidate tile for " + describe(p));
  for (const TunedShape& d : decided_)
    if (same_problem(d.problem, p)) return d.launch;
  TunedShape shape{p, candidates.front(), {}};
  if (candidates.size() > 1) {
    const auto start = std::chrono::steady_clock::now();
    for (const TileLaunch& launch : candidates) shape.trials.push_back({launch, INFINITY});
    for (int round = 0; round < kRounds; ++round)
      for (TileTrial& t : shape.trials) {
        const double ms = measure(t.launch);
        if (std::isfinite(ms) && ms > 0) t.milliseconds = std::min(t.milliseconds, ms);
      }
    double best = INFINITY;
    for (const TileTrial& t : shape.trials)
      if (t.milliseconds < best) best = t.milliseconds, shape.launch = t.launch;
    shape.tuning_milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  decided_.push_back(shape);
  return shape.launch;
}

}  // namespace octet::cuda::igemm
