// Grouped, depthwise and dilated convolutions on CUDA (the implicit GEMMs of
// cuda-imma, cuda-dp4a and cuda-cublaslt take dense, undilated ones): a
// direct convolution, one thread per 4 stored output channels of one output
// pixel. Plain C++ with host+device functions (no CUDA header), so that the
// host executor of the device layout (tests/ops) runs the kernel's own
// arithmetic on any machine.
#pragma once

#include <cstdint>

#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/pixel_item.h"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

// Activations NHWC with stored (padded) channels, a multiple of 4; values
// stored as stored_value.h says.
struct GroupedConvShape {
  int64_t batch = 0;
  int in_h = 0, in_w = 0, in_stored_c = 0;
  int out_h = 0, out_w = 0, out_stored_c = 0;
  int out_channels = 0;  // real ones; the stored channels past them come out 0
  int in_per_group = 0, out_per_group = 0;
  int kernel = 0, stride = 1, padding = 0, dilation = 1;
  bool unsigned_input = false;  // the input stored as uint8 (zero point -128)
  OCTET_HOST_DEVICE bool depthwise() const { return in_per_group == 1 && out_per_group == 1; }
  // Output channels per thread: 16 (one 16-byte load per tap) for depthwise
  // convs whose channels allow it, else 4.
  OCTET_HOST_DEVICE int lanes() const { return depthwise() && out_stored_c % 16 == 0 ? 16 : 4; }
  // Threads: one per `lanes()` stored channels of each output pixel.
  OCTET_HOST_DEVICE int64_t items() const { return batch * out_h * out_w * (out_stored_c / lanes()); }
};

// Weights as the kernel reads them: [kernel * kernel][in_per_group][out_stored_c],
// output channels innermost, so that adjacent threads read adjacent bytes.
OCTET_HOST_DEVICE int64_t grouped_weight_offset(const GroupedConvShape& s, int tap, int in_channel, int out_channel) {
  return (int64_t(tap) * s.in_per_group + in_channel) * s.out_stored_c + out_channel;
}

// Thread `item` of the conv (pixel-major, then runs of Lanes stored output
// channels); Lanes is s.lanes(). Kernel: s.kernel fixed at compile time (its
// taps unrolled, so that their loads issue together), or 0.
template <int Lanes, int Kernel>
OCTET_HOST_DEVICE void grouped_conv_item(const int8_t* __restrict__ x, const int8_t* __restrict__ w,
                                         const GroupedConvShape& s, const RequantEpilogue& e, int64_t item,
                                         int8_t* __restrict__ y) {
  constexpr int kWords = Lanes / 4;
  const int kernel = Kernel > 0 ? Kernel : s.kernel;
  const int runs = s.out_stored_c / Lanes;
  const auto [pixel, b, oy, ox, run] = pixel_item(s.batch * s.out_h * s.out_w * runs, s.out_h, s.out_w, runs, item);
  const int c0 = run * Lanes;
  int32_t acc[Lanes] = {};
  OCTET_DEVICE_UNROLL
  for (int ky = 0; ky < kernel; ++ky) {
    const int iy = oy * s.stride - s.padding + ky * s.dilation;
    if (iy < 0 || iy >= s.in_h) continue;
    OCTET_DEVICE_UNROLL
    for (int kx = 0; kx < kernel; ++kx) {
      const int ix = ox * s.stride - s.padding + kx * s.dilation;
      if (ix < 0 || ix >= s.in_w) continue;
      const int8_t* in = x + ((b * s.in_h + iy) * s.in_w + ix) * s.in_stored_c;
      const int tap = ky * kernel + kx;
      if (Lanes == 16 || s.depthwise()) {  // output channel c reads input channel c: Lanes bytes of each
        uint32_t xs[kWords], ws[kWords];
        load_words(in + c0, xs);
        load_words(w + grouped_weight_offset(s, tap, 0, c0), ws);
        for (int j = 0; j < Lanes; ++j)
          acc[j] += stored_value(xs[j / 4], j % 4, s.unsigned_input) * byte_of(ws[j / 4], j % 4);
      } else if constexpr (Lanes == 4) {
        for (int ci = 0; ci < s.in_per_group; ++ci) {
          uint32_t ws[kWords];
          load_words(w + grouped_weight_offset(s, tap, ci, c0), ws);
          for (int j = 0; j < Lanes; ++j)  // output channel c0 + j's group starts at input channel first
            if (const int o = c0 + j; o < s.out_channels)
              acc[j] += stored_value(in[o / s.out_per_group * s.in_per_group + ci], s.unsigned_input) *
                        byte_of(ws[j / 4], j % 4);
        }
      }
    }
  }
  const int64_t at = pixel * s.out_stored_c + c0;
  uint32_t out[kWords];
  for (int i = 0; i < kWords; ++i) {
    const int j = 4 * i;
    const auto out_of = [&](int k) { return requantize_stored_output(acc[k], c0 + k, at + k, e); };
    out[i] = pack_int8x4(out_of(j), out_of(j + 1), out_of(j + 2), out_of(j + 3));
  }
  store_words(y + at, out);
}

// Calls visitor.template run<Lanes, Kernel>() with the instantiation of
// grouped_conv_item that runs `s`: the CUDA launcher and the host executor
// of the tests pick the same one.
template <typename Visitor>
void visit_grouped_variant(const GroupedConvShape& s, Visitor&& visitor) {
  if (s.lanes() == 4) return visitor.template run<4, 0>();
  if (s.kernel == 3) return visitor.template run<16, 3>();
  if (s.kernel == 5) return visitor.template run<16, 5>();
  visitor.template run<16, 0>();
}

}  // namespace octet::cuda
