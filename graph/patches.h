// The rows of a float convolution's im2col matrix, as the float executor's
// conv and GPTQ's input statistics read them.
#pragma once

#include <cstdint>

#include "graph/graph.h"

namespace octet {

// Rows [first, first + count) of the im2col matrix of a conv reading NHWC
// `x`, for channel group `group`: each row is one output pixel's receptive
// field in (ky, kx, c) order over the group's input channels, zero outside
// the image. For a linear layer the rows are the input vectors.
void gather_patches(const Node& n, const ActShape& in, const ActShape& out, const float* x, int64_t first,
                    int64_t count, float* rows, int group = 0);
inline int64_t patch_size(const Node& n, const ActShape& in) {
  return n.op == Op::Conv2d ? int64_t(n.kernel) * kernel_width(n) * (in.c / n.groups) : in.numel();
}
inline int64_t patch_rows(const Node& n, const ActShape& out, int64_t batch) {
  return n.op == Op::Conv2d ? batch * out.h * out.w : batch;
}

}  // namespace octet
