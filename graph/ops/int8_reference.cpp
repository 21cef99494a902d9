#include "graph/ops/int8_reference.h"

#include <vector>

namespace octet::ops {

void write_by_pixel(const Int8ReferenceArgs& a, int64_t out_channels,
                    const std::function<void(const int16_t*, int64_t, int8_t*)>& levels) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  a.y = ActTensor({x.dim(0), out_channels, H, W});
  std::vector<int16_t> pixel(static_cast<size_t>(C));
  std::vector<int8_t> out(static_cast<size_t>(out_channels));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t yy = 0; yy < H; ++yy)
      for (int64_t xx = 0; xx < W; ++xx) {
        for (int64_t c = 0; c < C; ++c) pixel[static_cast<size_t>(c)] = at(x, b, c, yy, xx);
        levels(pixel.data(), C, out.data());
        for (int64_t c = 0; c < out_channels; ++c) at(a.y, b, c, yy, xx) = out[static_cast<size_t>(c)];
      }
}

void write_weighted(const Int8ReferenceArgs& a, int64_t channels, int64_t height, int64_t width,
                    const std::function<int32_t(int64_t n, int64_t c, int64_t y, int64_t x)>& accumulator) {
  const NodeQuant& q = a.q;
  const int64_t N = a.batch;
  if (a.is_output) {
    a.logits = Int32Tensor(logits_shape({int(channels), int(height), int(width)}, N));  // channels fastest
    int32_t* logit = a.logits.ptr();
    for (int64_t b = 0; b < N; ++b)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
          for (int64_t c = 0; c < channels; ++c) *logit++ = accumulator(b, c, y, x) + q.bias.data[c];
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
