#include "runtime/cuda/tile_tuner.h"

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

int TileTuner::choose(const Problem& p, const std::vector<int>& candidates, const Measure& measure) {
  check(!candidates.empty(), "cuda-imma tile tuner: no candidate tile for " + describe(p));
  for (const TunedShape& d : decided_)
    if (same_problem(d.problem, p)) return d.tile;
  TunedShape shape{p, candidates.front(), {}};
  if (candidates.size() > 1) {
    double best = 0;
    for (const int tile : candidates) {
      const double ms = measure(tile);
      shape.trials.push_back({tile, ms});
      const bool usable = std::isfinite(ms) && ms > 0;
      if (usable && (best == 0 || ms < best)) best = ms, shape.tile = tile;
    }
  }
  decided_.push_back(shape);
  return shape.tile;
}

}  // namespace octet::cuda::igemm
