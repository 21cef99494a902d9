// LayerNorm's int8 arithmetic (graph/ops/layer_norm.h says what it computes),
// host and device, so that the oracle, the CPU kernels and the CUDA kernel
// share it. Each floating step is one IEEE operation: a product, a quotient,
// a square root, the one sum of a product an explicit fma, rounding half to
// even; no compiler may fuse or reorder them, on the host or the device.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/requantize.h"  // OCTET_HOST_DEVICE

namespace octet {

// m of a pixel of `channels` values, from the exact sum and sum of squares of
// its values less the input's zero point: s_out / sqrt(V + epsilon C^2 s_in^2),
// V = C squares - sum^2 (scales in levels per unit); 0 where V = 0 (every value
// the mean: each d_c is 0).
OCTET_HOST_DEVICE double layer_norm_multiplier(int64_t sum, int64_t squares, int64_t channels, double epsilon,
                                               double input_scale, double output_scale) {
  const int64_t variance = channels * squares - sum * sum;
  if (variance == 0) return 0.0;
  const double guard = epsilon * double(channels) * double(channels);
  return output_scale / ::sqrt(::fma(guard, input_scale * input_scale, double(variance)));
}

// The output level before its zero point of d_c = C (x_c - zero point) - sum:
// d_c m rounded half to even (rint in the default rounding mode, which octet
// never changes; on the device always).
OCTET_HOST_DEVICE double layer_norm_level(int64_t d, double m) { return ::rint(double(d) * m); }

}  // namespace octet
