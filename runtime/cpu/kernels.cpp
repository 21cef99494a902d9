#include "runtime/cpu/kernels.h"

#include <algorithm>
#include <cstring>

#include "runtime/requantize.h"

namespace octet::cpu {

namespace {
// Output rows handled per task; the patch buffer of a task stays in L2.
constexpr int64_t kRowsPerTask = 64;

// Copies the receptive field of output row m (kh x kw x C, zero outside the image).
void gather_patch(const ConvGeometry& g, const int8_t* input, int64_t m, int8_t* patch) {
  const int64_t ox = m % g.out_w, oy = (m / g.out_w) % g.out_h, b = m / (int64_t(g.out_w) * g.out_h);
  for (int ky = 0; ky < g.kernel; ++ky) {
    const int64_t iy = oy * g.stride - g.padding + ky;
    for (int kx = 0; kx < g.kernel; ++kx, patch += g.in_c) {
      const int64_t ix = ox * g.stride - g.padding + kx;
      if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w)
        std::memset(patch, 0, g.in_c);
      else
        std::memcpy(patch, input + ((b * g.in_h + iy) * g.in_w + ix) * g.in_c, g.in_c);
    }
  }
}

int32_t dot(const int8_t* a, const int8_t* b, int64_t n) {
  int32_t acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += int32_t(a[k]) * int32_t(b[k]);
  return acc;
}

// Runs `body(m, patch)` for every output row, in parallel tasks with a patch buffer each.
template <typename Body>
void for_each_patch(const ConvGeometry& g, const int8_t* input, Body body) {
  const int64_t rows = g.rows(), depth = g.depth();
  const bool direct = g.kernel == 1 && g.stride == 1 && g.padding == 0;  // the input row is the patch
#pragma omp parallel
  {
    std::vector<int8_t> patch(static_cast<size_t>(depth));
#pragma omp for schedule(static)
    for (int64_t first = 0; first < rows; first += kRowsPerTask) {
      const int64_t end = std::min(rows, first + kRowsPerTask);
      for (int64_t m = first; m < end; ++m) {
        const int8_t* p = input + m * depth;
        if (!direct) {
          gather_patch(g, input, m, patch.data());
          p = patch.data();
        }
        body(m, p);
      }
    }
  }
}
}  // namespace

PackedWeights::PackedWeights(const int8_t* ohwi, int out_c, int64_t depth)
    : out_c_(out_c), depth_(depth), rows_(ohwi, ohwi + out_c * depth) {}

void conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const Epilogue& e, int8_t* output) {
  const int32_t lo = e.relu ? 0 : -128;
  for_each_patch(g, input, [&](int64_t m, const int8_t* patch) {
    int8_t* out = output + m * g.out_c;
    const int8_t* skip = e.skip ? e.skip + m * g.out_c : nullptr;
    for (int o = 0; o < g.out_c; ++o) {
      const int32_t acc = dot(patch, w.rows() + o * g.depth(), g.depth()) + e.bias[o];
      out[o] = static_cast<int8_t>(requantize(acc, e.multiplier[o], skip ? skip[o] : 0,
                                              skip ? e.skip_multiplier[o] : 0, e.shift[o], lo));
    }
  });
}

void conv2d_int32(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const int32_t* bias,
                  int32_t* output) {
  for_each_patch(g, input, [&](int64_t m, const int8_t* patch) {
    for (int o = 0; o < g.out_c; ++o) output[m * g.out_c + o] = dot(patch, w.rows() + o * g.depth(), g.depth()) + bias[o];
  });
}

void quantize_input(const float* nchw, int64_t batch, int c, int h, int w, float scale, int8_t* nhwc) {
  const int64_t plane = int64_t(h) * w;
#pragma omp parallel for
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t p = 0; p < plane; ++p)
      for (int ch = 0; ch < c; ++ch)
        nhwc[(n * plane + p) * c + ch] = octet::quantize_input(nchw[(n * c + ch) * plane + p], scale);
}

void max_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int8_t* out) {
  const int oh = (h - kernel) / stride + 1, ow = (w - kernel) / stride + 1;
#pragma omp parallel for
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
#pragma omp parallel for
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
#pragma omp parallel for
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
#pragma omp parallel for
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<int8_t>(requantize(a[i], multiplier_a, b[i], multiplier_b, shift, lo));
}

void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int pad, int8_t* out) {
  const int oh = (h + 1) / 2, ow = (w + 1) / 2, oc = c + 2 * pad;
#pragma omp parallel for
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
