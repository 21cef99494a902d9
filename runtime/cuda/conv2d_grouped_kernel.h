// Grouped, depthwise and dilated convolutions on CUDA (the implicit GEMMs of
// cuda-imma, cuda-dp4a and cuda-cublaslt take dense, undilated ones): a
// direct convolution, one thread per 4 or 16 stored output channels of one
// output pixel, or of 4 side by side (row_pixels). Plain C++ with host+device
// functions (no CUDA header), so that the host executor of the device layout
// (tests/ops) runs the kernel's own arithmetic on any machine.
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
  int kernel = 0, kernel_w = 0, stride = 1, padding = 0, dilation = 1;  // kernel x kernel_w taps
  bool unsigned_input = false;  // the input stored as uint8 (zero point -128)
  // Output pixels a thread where rows_possible(): 1, or 4 (depthwise_row_item).
  // The CUDA engine times both per conv; untimed, 4 for 7x7 kernels only
  // (default_row_pixels).
  int pixels = 1;
  OCTET_HOST_DEVICE bool depthwise() const { return in_per_group == 1 && out_per_group == 1; }
  // Output channels per thread: 16 (one 16-byte load per tap) for depthwise
  // convs whose channels allow it, else 4.
  OCTET_HOST_DEVICE int lanes() const { return depthwise() && out_stored_c % 16 == 0 ? 16 : 4; }
  // Whether 4 output pixels side by side in a row can share a thread: 16-lane
  // depthwise convs of stride 1 and a square kernel of 3, 5 or 7 (each input
  // vector loaded then serves up to `kernel` outputs, each weight 4).
  OCTET_HOST_DEVICE bool rows_possible() const {
    return lanes() == 16 && stride == 1 && dilation == 1 && kernel == kernel_w &&
           (kernel == 3 || kernel == 5 || kernel == 7);
  }
  // Output pixels per thread.
  OCTET_HOST_DEVICE int row_pixels() const { return rows_possible() ? pixels : 1; }
  // The choice without timing: rows for 7x7 kernels (on an H200 ConvNeXt-T's
  // 7x7 convs took 8.2 of its 39.5 ms at one pixel a thread); one pixel for
  // 3x3 and 5x5 (MobileNetV2-224's took 2.75 of 5.97 ms so, rows not yet timed).
  OCTET_HOST_DEVICE int default_row_pixels() const { return kernel == 7 ? 4 : 1; }
  // Threads along a row of output pixels.
  OCTET_HOST_DEVICE int item_columns() const { return (out_w + row_pixels() - 1) / row_pixels(); }
  // Threads: one per `lanes()` stored channels of each `row_pixels()` output pixels.
  OCTET_HOST_DEVICE int64_t items() const { return batch * out_h * item_columns() * (out_stored_c / lanes()); }
};

// Weights as the kernel reads them: [kernel * kernel][in_per_group][out_stored_c],
// output channels innermost, so that adjacent threads read adjacent bytes.
OCTET_HOST_DEVICE int64_t grouped_weight_offset(const GroupedConvShape& s, int tap, int in_channel, int out_channel) {
  return (int64_t(tap) * s.in_per_group + in_channel) * s.out_stored_c + out_channel;
}

// Thread `item` of the conv (pixel-major, then runs of Lanes stored output
// channels); Lanes is s.lanes(). Kernel: a square s.kernel fixed at compile
// time (its taps unrolled, so that their loads issue together), or 0. Table:
// e has a fused activation (word_through_table), mapped once every word is
// packed, in instantiations of its own: within the kernel's 48 registers the
// step spills 8 bytes (sm_80 and sm_90), which the convs without one then do not.
template <int Lanes, int Kernel, bool Table>
OCTET_HOST_DEVICE void grouped_conv_item(const int8_t* __restrict__ x, const int8_t* __restrict__ w,
                                         const GroupedConvShape& s, const RequantEpilogue& e, int64_t item,
                                         int8_t* __restrict__ y) {
  constexpr int kWords = Lanes / 4;
  const int kernel = Kernel > 0 ? Kernel : s.kernel, kernel_w = Kernel > 0 ? Kernel : s.kernel_w;
  const int runs = s.out_stored_c / Lanes;
  const auto [pixel, b, oy, ox, run] = pixel_item(s.batch * s.out_h * s.out_w * runs, s.out_h, s.out_w, runs, item);
  const int c0 = run * Lanes;
  int32_t acc[Lanes] = {};
  OCTET_DEVICE_UNROLL
  for (int ky = 0; ky < kernel; ++ky) {
    const int iy = oy * s.stride - s.padding + ky * s.dilation;
    if (iy < 0 || iy >= s.in_h) continue;
    OCTET_DEVICE_UNROLL
    for (int kx = 0; kx < kernel_w; ++kx) {
      const int ix = ox * s.stride - s.padding + kx * s.dilation;
      if (ix < 0 || ix >= s.in_w) continue;
      const int8_t* in = x + ((b * s.in_h + iy) * s.in_w + ix) * s.in_stored_c;
      const int tap = ky * kernel_w + kx;
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
  if constexpr (Table)  // once every word is packed: fewer registers at once
    for (int i = 0; i < kWords; ++i) out[i] = word_through_table(out[i], c0 + 4 * i, e);
  store_words(y + at, out);
}

// Thread `item` of a depthwise conv of stride 1 (s.row_pixels() is Pixels):
// output pixels ox0 .. ox0 + Pixels - 1 of one row, 16 stored channels. Row ky
// of the kernel: its Kernel weight vectors loaded once, then each of the
// Pixels + Kernel - 1 input vectors under the outputs' windows once, added to
// every output whose window holds it. The same integer products and sums as
// grouped_conv_item's; Table as there.
template <int Pixels, int Kernel, bool Table>
OCTET_HOST_DEVICE void depthwise_row_item(const int8_t* __restrict__ x, const int8_t* __restrict__ w,
                                          const GroupedConvShape& s, const RequantEpilogue& e, int64_t item,
                                          int8_t* __restrict__ y) {
  const int runs = s.out_stored_c / 16;
  const auto [cell, b, oy, column, run] =
      pixel_item(s.batch * s.out_h * s.item_columns() * runs, s.out_h, s.item_columns(), runs, item);
  const int ox0 = column * Pixels, c0 = run * 16;
  int32_t acc[Pixels][16] = {};
  OCTET_DEVICE_UNROLL
  for (int ky = 0; ky < Kernel; ++ky) {
    const int iy = oy - s.padding + ky;
    if (iy < 0 || iy >= s.in_h) continue;
    uint32_t ws[Kernel][4];
    OCTET_DEVICE_UNROLL
    for (int kx = 0; kx < Kernel; ++kx) load_words(w + grouped_weight_offset(s, ky * Kernel + kx, 0, c0), ws[kx]);
    const int8_t* row = x + (b * s.in_h + iy) * s.in_w * s.in_stored_c + c0;
    OCTET_DEVICE_UNROLL
    for (int t = 0; t < Pixels + Kernel - 1; ++t) {  // input column ox0 - padding + t
      const int ix = ox0 - s.padding + t;
      if (ix < 0 || ix >= s.in_w) continue;
      uint32_t xs[4];
      load_words(row + int64_t(ix) * s.in_stored_c, xs);
      OCTET_DEVICE_UNROLL
      for (int p = 0; p < Pixels; ++p) {
        const int kx = t - p;  // the tap of output ox0 + p over this column
        if (kx < 0 || kx >= Kernel) continue;
        for (int j = 0; j < 16; ++j)
          acc[p][j] += stored_value(xs[j / 4], j % 4, s.unsigned_input) * byte_of(ws[kx][j / 4], j % 4);
      }
    }
  }
  OCTET_DEVICE_UNROLL  // acc's indices known at compile time: it stays in registers
  for (int p = 0; p < Pixels; ++p) {
    if (ox0 + p >= s.out_w) break;
    const int64_t at = ((b * s.out_h + oy) * s.out_w + ox0 + p) * s.out_stored_c + c0;
    uint32_t out[4];
    for (int i = 0; i < 4; ++i) {
      const auto out_of = [&](int k) { return requantize_stored_output(acc[p][k], c0 + k, at + k, e); };
      out[i] = pack_int8x4(out_of(4 * i), out_of(4 * i + 1), out_of(4 * i + 2), out_of(4 * i + 3));
    }
    if constexpr (Table)
      for (int i = 0; i < 4; ++i) out[i] = word_through_table(out[i], c0 + 4 * i, e);
    store_words(y + at, out);
  }
}

// Calls visitor.template run<Lanes, Kernel, Pixels, Table>() with the
// instantiation that runs `s` with epilogue `e` (Pixels 1:
// grouped_conv_item<Lanes, Kernel, Table>; else depthwise_row_item<Pixels,
// Kernel, Table>): the CUDA launcher and the host executor of the tests pick the same one.
template <bool Table, typename Visitor>
void visit_grouped_variant_of(const GroupedConvShape& s, Visitor&& visitor) {
  if (s.lanes() == 4) return visitor.template run<4, 0, 1, Table>();
  if (s.row_pixels() == 4) {
    if (s.kernel == 3) return visitor.template run<16, 3, 4, Table>();
    if (s.kernel == 5) return visitor.template run<16, 5, 4, Table>();
    return visitor.template run<16, 7, 4, Table>();
  }
  if (s.kernel_w != s.kernel) return visitor.template run<16, 0, 1, Table>();
  if (s.kernel == 3) return visitor.template run<16, 3, 1, Table>();
  if (s.kernel == 5) return visitor.template run<16, 5, 1, Table>();
  visitor.template run<16, 0, 1, Table>();
}
template <typename Visitor>
void visit_grouped_variant(const GroupedConvShape& s, const RequantEpilogue& e, Visitor&& visitor) {
  if (e.table)
    visit_grouped_variant_of<true>(s, visitor);
  else
    visit_grouped_variant_of<false>(s, visitor);
}

}  // namespace octet::cuda
