// A loop shared between OpenMP threads only where it is worth it; below
// that no region is opened at all (idle_threads.h: libgomp ends even a
// one-thread region with a system call).
#pragma once

#include <cstdint>

namespace octet::cpu {
namespace {  // internal linkage: files built with SIMD flags include this too

// body(i) for every i in [0, n): shared between the threads (a static
// schedule) where `parallel`, else on the calling thread.
template <typename Body>
inline void parallel_for(int64_t n, bool parallel, Body body) {
  if (!parallel) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace
}  // namespace octet::cpu
