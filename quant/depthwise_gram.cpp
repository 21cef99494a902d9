#include "quant/depthwise_gram.h"

#include <algorithm>
#include <cmath>

namespace octet {

namespace {
// Channels per unit of work: their accumulators (one per tap pair) stay in L1.
constexpr int64_t kChannelBlock = 64;
}  // namespace

void add_depthwise_gram(const Node& node, const ActShape& in, const ActShape& out, const float* act, int64_t first_row,
                        int64_t stride, int64_t picked, std::vector<Eigen::MatrixXf>& hessians) {
  const int64_t C = in.c, kw = kernel_width(node), taps = int64_t(node.kernel) * kw;
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (row, column) of H's lower triangle
  for (int64_t r = 0; r < taps; ++r)
    for (int64_t c = 0; c <= r; ++c) pairs.emplace_back(r, c);
  const std::vector<float> zeros(static_cast<size_t>(C), 0.0f);  // a tap outside the image
#pragma omp parallel for schedule(dynamic)
  for (int64_t c0 = 0; c0 < C; c0 += kChannelBlock) {
    const int64_t width = std::min(kChannelBlock, C - c0);
    std::vector<float> acc(pairs.size() * kChannelBlock);  // [pair][channel]
    for (size_t p = 0; p < pairs.size(); ++p)
      for (int64_t c = 0; c < width; ++c) acc[p * kChannelBlock + c] = hessians[c0 + c](pairs[p].first, pairs[p].second);
    std::vector<const float*> tap(static_cast<size_t>(taps));
    for (int64_t k = 0; k < picked; ++k) {
      const int64_t m = first_row + k * stride, ox = m % out.w, oy = (m / out.w) % out.h, b = m / (int64_t(out.w) * out.h);
      for (int64_t ky = 0; ky < node.kernel; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t iy = oy * node.stride - node.padding + ky * node.dilation;
          const int64_t ix = ox * node.stride - node.padding + kx * node.dilation;
          const bool inside = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
          tap[ky * kw + kx] = (inside ? act + ((b * in.h + iy) * in.w + ix) * C : zeros.data()) + c0;
        }
      for (size_t p = 0; p < pairs.size(); ++p) {
        const float* x = tap[pairs[p].first];
        const float* y = tap[pairs[p].second];
        float* h = acc.data() + p * kChannelBlock;
        for (int64_t c = 0; c < width; ++c) h[c] = std::fma(x[c], y[c], h[c]);
      }
    }
    for (size_t p = 0; p < pairs.size(); ++p)
      for (int64_t c = 0; c < width; ++c) hessians[c0 + c](pairs[p].first, pairs[p].second) = acc[p * kChannelBlock + c];
  }
}

}  // namespace octet
