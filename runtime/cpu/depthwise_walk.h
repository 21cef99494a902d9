// The walk of the SIMD depthwise kernels (depthwise_vnni.cpp,
// depthwise_avx2.cpp) over output rows shared between threads
// (for_each_output_row).
// Internal linkage: each kernel file compiles them with its own instruction
// set, and none of it reaches another file's callers.
#pragma once

#include <cstdint>

#include "runtime/cpu/idle_threads.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {
namespace {

// Smaller layers run on the calling thread: starting the others would cost
// more than they save (idle_threads.h: far less where idle threads spin).
// Their work counts each output's requantization as kEpilogueMacs
// multiply-adds besides its taps': a 1x1 depthwise conv (a batch norm on its
// own, as DenseNet's import) is nearly all epilogue, and counted by its taps
// alone most of DenseNet-121's ran on one thread.
constexpr int64_t kDepthwiseMinParallelSpinning = int64_t{1} << 18;
constexpr int64_t kDepthwiseMinParallelSleeping = int64_t{1} << 22;
constexpr int64_t kEpilogueMacs = 16;

inline bool depthwise_in_parallel(const ConvGeometry& g) {
  return g.rows() * g.out_c * (g.kernel * g.kernel_w + kEpilogueMacs) >=
         min_parallel_work(kDepthwiseMinParallelSpinning, kDepthwiseMinParallelSleeping);
}

// Calls row(b, oy, state) for every output row oy of every image b, rows
// shared between threads; each thread's `state` is made by make_state() and
// takes its rows in order, one run of them.
template <typename MakeState, typename Row>
inline void for_each_output_row(const ConvGeometry& g, MakeState make_state, Row row) {
  parallel_for(g.batch * g.out_h, depthwise_in_parallel(g), make_state,
               [&](int64_t r, auto& state) { row(r / g.out_h, r % g.out_h, state); });
}

// The same without a state.
template <typename Row>
inline void for_each_output_row(const ConvGeometry& g, Row row) {
  for_each_output_row(g, [] { return 0; }, [&](int64_t b, int64_t oy, int) { row(b, oy); });
}

}  // namespace
}  // namespace octet::cpu
