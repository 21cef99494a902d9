// One row of `octet bench infer`'s tables: a backend or float peer at one
// batch size, from its timed runs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/timing.h"

namespace octet {

// One row of a benchmark table.
struct Measurement {
  int64_t batch;
  // "cpu" (or "cpu/<kernel path>"), "cuda-imma", ..., "libtorch-cpu", "libtorch-cuda", "libtorch-cuda-graph",
  // or without LibTorch "octet-float-cpu"
  std::string name;
  std::string precision;  // "int8", "float32", "float16"
  double latency_ms;      // median per batch
  // The fastest timed run: on a shared machine, others' work only slows runs
  // down, so it is the steadier of the two where the median wanders.
  double fastest_ms;
  double images_per_second() const { return 1000.0 * static_cast<double>(batch) / latency_ms; }
};

// The row of timed runs of `run_ms` milliseconds each (at least one).
inline Measurement timed_row(int64_t batch, std::string name, std::string precision,
                             const std::vector<double>& run_ms) {
  return {batch, std::move(name), std::move(precision), median(run_ms), fastest(run_ms)};
}

}  // namespace octet
