#include "graph/patches.h"

#include <algorithm>
#include <cstring>

namespace octet {

void gather_patches(const Node& n, const ActShape& in, const ActShape& out, const float* x, int64_t first,
                    int64_t count, float* rows, int group) {
  const int64_t K = patch_size(n, in);
  if (n.op != Op::Conv2d) {
    std::memcpy(rows, x + first * K, sizeof(float) * count * K);
    return;
  }
  const int64_t group_c = in.c / n.groups, kw = kernel_width(n), tap_row = kw * group_c, d = n.dilation;
  x += int64_t(group) * group_c;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t m = first + r, ox = m % out.w, oy = (m / out.w) % out.h, b = m / (int64_t(out.w) * out.h);
    const int64_t x0 = ox * n.stride - n.padding;
    // The taps inside the image, x0 + kx * d in [0, in.w): kx in [kx_begin, kx_end).
    const int64_t kx_begin = std::clamp<int64_t>((-x0 + d - 1) / d, 0, kw);
    const int64_t kx_end = std::clamp<int64_t>((in.w - x0 + d - 1) / d, 0, kw);
    float* dst = rows + r * K;
    for (int64_t ky = 0; ky < n.kernel; ++ky, dst += tap_row) {
      const int64_t iy = oy * n.stride - n.padding + ky * d;
      if (iy < 0 || iy >= in.h || kx_begin >= kx_end) {
        std::fill(dst, dst + tap_row, 0.0f);
        continue;
      }
      std::fill(dst, dst + kx_begin * group_c, 0.0f);
      const float* pixel = x + ((b * in.h + iy) * in.w + x0 + kx_begin * d) * in.c;
      if (n.groups == 1 && d == 1) {  // a kernel row's taps inside the image are adjacent pixels in NHWC: one copy
        std::memcpy(dst + kx_begin * in.c, pixel, sizeof(float) * (kx_end - kx_begin) * in.c);
      } else {
        for (int64_t kx = kx_begin; kx < kx_end; ++kx, pixel += d * in.c)
          std::memcpy(dst + kx * group_c, pixel, sizeof(float) * group_c);
      }
      std::fill(dst + kx_end * group_c, dst + tap_row, 0.0f);
    }
  }
}

}  // namespace octet
