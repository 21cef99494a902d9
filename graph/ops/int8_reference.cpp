#include "graph/ops/int8_reference.h"

namespace octet::ops {

void write_weighted(const Int8ReferenceArgs& a, int64_t channels, int64_t height, int64_t width,
                    const std::function<int32_t(int64_t n, int64_t c, int64_t y, int64_t x)>& accumulator) {
  const NodeQuant& q = a.q;
  const int64_t N = a.batch;
  if (a.is_output) {
    a.logits = Int32Tensor({N, channels});  // the output is a linear layer: height and width 1
    for (int64_t b = 0; b < N; ++b)
      for (int64_t c = 0; c < channels; ++c) a.logits.data[b * channels + c] = accumulator(b, c, 0, 0) + q.bias.data[c];
    return;
  }
  a.y = ActTensor({N, channels, height, width});
  const ActTensor* skip = a.inputs.size() == 2 ? a.inputs[1] : nullptr;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x) {
          const int32_t acc = accumulator(b, c, y, x) + q.bias.data[c];
          const int32_t residual = skip ? centered(a, 1, b, c, y, x) : 0;
          at(a.y, b, c, y, x) = static_cast<int16_t>(requantize(acc, q.multiplier.data[c], residual,
                                                               skip ? q.skip_multiplier.data[c] : 0, q.shift.data[c],
                                                               output_floor(a), q.zero_point, highest_output(q.bits)));
        }
}

}  // namespace octet::ops
