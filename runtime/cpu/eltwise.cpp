// The CPU runtime's kernels other than the convolution: input quantization,
// pooling, add, the option-A shortcut and ReLU, each requantizing through
// runtime/requantize.h.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "runtime/requantize.h"

namespace octet::cpu {

void quantize_input(const float* nchw, int64_t batch, int c, int h, int w, float scale, int8_t* nhwc) {
  const int64_t plane = int64_t(h) * w;
#pragma omp parallel for if (batch * plane * c >= kMinParallelWork)
  for (int64_t n = 0; n < batch; ++n)
    for (int ch = 0; ch < c; ++ch) {  // reads each plane in order, so the loop vectorises
      const float* src = nchw + (n * c + ch) * plane;
      int8_t* dst = nhwc + n * plane * c + ch;
      for (int64_t p = 0; p < plane; ++p) dst[p * c] = octet::quantize_input(src[p], scale);
    }
}

void max_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int8_t* out) {
  const int oh = (h - kernel) / stride + 1, ow = (w - kernel) / stride + 1;
#pragma omp parallel for if (batch * h * w * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        int8_t* dst = out + ((b * oh + oy) * ow + ox) * c;
        std::fill(dst, dst + c, static_cast<int8_t>(-128));
        for (int ky = 0; ky < kernel; ++ky)
          for (int kx = 0; kx < kernel; ++kx) {
            const int8_t* src = in + ((b * h + oy * stride + ky) * w + ox * stride + kx) * c;
            for (int ch = 0; ch < c; ++ch) dst[ch] = std::max(dst[ch], src[ch]);
          }
      }
}

void avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int32_t multiplier,
              int32_t shift, int8_t* out) {
  const int oh = (h - kernel) / stride + 1, ow = (w - kernel) / stride + 1;
#pragma omp parallel for if (batch * h * w * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          int32_t sum = 0;
          for (int ky = 0; ky < kernel; ++ky)
            for (int kx = 0; kx < kernel; ++kx) sum += in[((b * h + oy * stride + ky) * w + ox * stride + kx) * c + ch];
          out[((b * oh + oy) * ow + ox) * c + ch] = static_cast<int8_t>(requantize(sum, multiplier, 0, 0, shift, -128));
        }
}

void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int8_t* out) {
  const int64_t plane = int64_t(h) * w;
#pragma omp parallel for if (batch * plane * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int32_t> sum(static_cast<size_t>(c), 0);
    for (int64_t p = 0; p < plane; ++p)
      for (int ch = 0; ch < c; ++ch) sum[ch] += in[(b * plane + p) * c + ch];
    for (int ch = 0; ch < c; ++ch)
      out[b * c + ch] = static_cast<int8_t>(requantize(sum[ch], multiplier, 0, 0, shift, -128));
  }
}

void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, int8_t* out) {
  const int32_t lo = relu ? 0 : -128;
#pragma omp parallel for if (count >= kMinParallelWork)
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<int8_t>(requantize(a[i], multiplier_a, b[i], multiplier_b, shift, lo));
}

void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int pad, int8_t* out) {
  const int oh = (h + 1) / 2, ow = (w + 1) / 2, oc = c + 2 * pad;
#pragma omp parallel for if (batch * h * w * c >= kMinParallelWork)
  for (int64_t b = 0; b < batch; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        int8_t* dst = out + ((b * oh + oy) * ow + ox) * oc;
        std::memset(dst, 0, pad);
        std::memcpy(dst + pad, in + ((b * h + 2 * oy) * w + 2 * ox) * c, c);
        std::memset(dst + pad + c, 0, pad);
      }
}

void relu(const int8_t* in, int64_t count, int8_t* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = std::max<int8_t>(in[i], 0);
}

}  // namespace octet::cpu
