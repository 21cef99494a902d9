// Helpers of the operators' float references (graph/op.h).
#pragma once

#include "graph/op.h"

namespace octet::ops {

// Element-wise loops this short run on the calling thread (waking the others costs more).
constexpr int64_t kMinParallelElements = int64_t(1) << 15;

// The weighted operators (conv2d, linear): the rows of the im2col matrix
// (graph/patches.h) times the weight, plus the bias.
// In fixed row tasks, each an OrderedGemm: the bits depend on neither the
// thread count nor the CPU's vector width.
void run_weighted_float(const FloatOpArgs& a);

}  // namespace octet::ops
