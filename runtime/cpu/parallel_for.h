// A loop shared between OpenMP threads only where it is worth it; below
// that no region is opened at all (idle_threads.h: libgomp ends even a
// one-thread region with a system call).
#pragma once

#include <omp.h>

#include <cstdint>

namespace octet::cpu {
namespace {  // internal linkage: files built with SIMD flags include this too

// Whether work worth sharing between threads (`worth`) is shared: not by a
// thread that is already one of a region's, running its share of a batch
// (cpu_engine.cpp), where a region of its own would run on it alone.
inline bool share_work(bool worth) { return worth && !omp_in_parallel(); }

// body(i, state) for every i in [0, n): shared between the threads (a static
// schedule) where `parallel`, else on the calling thread; each thread's
// `state` is made once by make_state().
template <typename MakeState, typename Body>
inline void parallel_for(int64_t n, bool parallel, MakeState make_state, Body body) {
  if (!share_work(parallel)) {
    auto state = make_state();
    for (int64_t i = 0; i < n; ++i) body(i, state);
    return;
  }
#pragma omp parallel
  {
    auto state = make_state();
#pragma omp for schedule(static) nowait  // the region's end is the one barrier
    for (int64_t i = 0; i < n; ++i) body(i, state);
  }
}

// The same without a state: body(i).
template <typename Body>
inline void parallel_for(int64_t n, bool parallel, Body body) {
  parallel_for(n, parallel, [] { return 0; }, [&](int64_t i, int) { body(i); });
}

}  // namespace
}  // namespace octet::cpu
