// Grouped, depthwise and dilated convolutions on CUDA (the implicit GEMMs of
// cuda-imma, cuda-dp4a and cuda-cublaslt take dense, undilated ones): a
// direct convolution, one thread per 4 stored output channels of one output
// pixel. Plain C++ with host+device functions (no CUDA header), so that the
// host executor of the device layout (tests/ops) runs the kernel's own
// arithmetic on any machine.
#pragma once

#include <cstdint>
#include <cstring>

#include "runtime/cuda/int8x4.h"
#include "runtime/requant_epilogue.h"

namespace octet::cuda {

// Activations NHWC int8 with stored (padded) channels, a multiple of 4.
struct GroupedConvShape {
  int64_t batch = 0;
  int in_h = 0, in_w = 0, in_stored_c = 0;
  int out_h = 0, out_w = 0, out_stored_c = 0;
  int out_channels = 0;  // real ones; the stored channels past them come out 0
  int in_per_group = 0, out_per_group = 0;
  int kernel = 0, stride = 1, padding = 0, dilation = 1;
  OCTET_HOST_DEVICE int64_t words() const { return batch * out_h * out_w * (out_stored_c / 4); }
  OCTET_HOST_DEVICE bool depthwise() const { return in_per_group == 1 && out_per_group == 1; }
};

// Weights as the kernel reads them: [kernel * kernel][in_per_group][out_stored_c],
// output channels innermost, so that adjacent threads read adjacent bytes.
OCTET_HOST_DEVICE int64_t grouped_weight_offset(const GroupedConvShape& s, int tap, int in_channel, int out_channel) {
  return (int64_t(tap) * s.in_per_group + in_channel) * s.out_stored_c + out_channel;
}

OCTET_HOST_DEVICE uint32_t load_word(const int8_t* p) {  // 4-byte aligned
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

OCTET_HOST_DEVICE void store_word(int8_t* p, uint32_t v) {  // 4-byte aligned
#ifdef __CUDA_ARCH__
  *reinterpret_cast<uint32_t*>(p) = v;
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

OCTET_HOST_DEVICE int32_t byte_of(uint32_t word, int j) { return static_cast<int8_t>(word >> (8 * j)); }

// Output word `word` (pixel-major, then groups of 4 stored channels) of the conv.
OCTET_HOST_DEVICE void grouped_conv_word(const int8_t* __restrict__ x, const int8_t* __restrict__ w,
                                         const GroupedConvShape& s, const RequantEpilogue& e, int64_t word,
                                         int8_t* __restrict__ y) {
  const int words_per_pixel = s.out_stored_c / 4;
  const int c0 = static_cast<int>(word % words_per_pixel) * 4;
  const int64_t pixel = word / words_per_pixel;
  const int ox = static_cast<int>(pixel % s.out_w);
  const int oy = static_cast<int>((pixel / s.out_w) % s.out_h);
  const int64_t b = pixel / (int64_t(s.out_w) * s.out_h);
  // The first input channel of each output channel's group; -1 past the real channels.
  int first_in[4];
  for (int j = 0; j < 4; ++j)
    first_in[j] = c0 + j < s.out_channels ? (c0 + j) / s.out_per_group * s.in_per_group : -1;
  int32_t acc[4] = {0, 0, 0, 0};
  for (int ky = 0; ky < s.kernel; ++ky) {
    const int iy = oy * s.stride - s.padding + ky * s.dilation;
    if (iy < 0 || iy >= s.in_h) continue;
    for (int kx = 0; kx < s.kernel; ++kx) {
      const int ix = ox * s.stride - s.padding + kx * s.dilation;
      if (ix < 0 || ix >= s.in_w) continue;
      const int8_t* in = x + ((b * s.in_h + iy) * s.in_w + ix) * s.in_stored_c;
      const int tap = ky * s.kernel + kx;
      if (s.depthwise()) {  // output channel c reads input channel c: one word of each
        const uint32_t xs = load_word(in + c0), ws = load_word(w + grouped_weight_offset(s, tap, 0, c0));
        for (int j = 0; j < 4; ++j) acc[j] += byte_of(xs, j) * byte_of(ws, j);
        continue;
      }
      for (int ci = 0; ci < s.in_per_group; ++ci) {
        const uint32_t ws = load_word(w + grouped_weight_offset(s, tap, ci, c0));
        for (int j = 0; j < 4; ++j)
          if (first_in[j] >= 0) acc[j] += int32_t(in[first_in[j] + ci]) * byte_of(ws, j);
      }
    }
  }
  const int64_t at = pixel * s.out_stored_c + c0;
  store_word(y + at, pack_int8x4(requantize_output(acc[0], c0, at, e), requantize_output(acc[1], c0 + 1, at + 1, e),
                                  requantize_output(acc[2], c0 + 2, at + 2, e),
                                  requantize_output(acc[3], c0 + 3, at + 3, e)));
}

}  // namespace octet::cuda
