// cuda-imma's first conv over a patches-folded image (folded_input.h),
// computed straight from the float image: a thread quantizes one output
// pixel's window as patch_input_item stores it (source_word: tap t's 4
// channels, one word) and multiplies it by 16 output channels' folded weight
// rows (tap t's word at byte 4t), through the conv's epilogue. The same words
// and products as quantizing the patches and running the implicit GEMM's 1x1
// conv over them, so the same sums and bits, without the patches' round trip
// through memory (ResNet-18 at batch 256 on an H200: 12.6 MB written and
// read back, 0.06 of its 0.81 ms for the two kernels). Plain C++ with
// host+device functions: the tests run the kernel's own arithmetic.
#pragma once

#include <cstdint>

#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/pixel_item.h"
#include "runtime/cuda/quantize_input_kernel.h"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

constexpr int kPatchConvChannels = 16;  // output channels a thread computes
constexpr int kPatchConvMaxTaps = 16;   // kernels of 2-4 (image_fold)

struct PatchConvShape {
  PatchInput input;   // the folded image: its stored pixels are the conv's output pixels
  int out_c = 0;      // stored output channels, a multiple of 16
  int row_bytes = 0;  // bytes of a weight row (the implicit GEMM's packed depth)
  OCTET_HOST_DEVICE int groups() const { return out_c / kPatchConvChannels; }
  OCTET_HOST_DEVICE int64_t items() const { return input.items() * groups(); }
};

// Thread `item`: output pixel item / groups(), channels 16 x (item % groups()) .. + 15,
// stored 8-bit (`e.bits` 8; a residual of 8 bits) into `out` ([pixels][out_c]).
OCTET_HOST_DEVICE void patch_conv_item(const float* __restrict__ nchw, const PatchConvShape& s, float scale,
                                       const int8_t* __restrict__ weights, const RequantEpilogue& e, int64_t item,
                                       int8_t* __restrict__ out) {
  const PatchInput& in = s.input;
  const PixelItem at = pixel_item(s.items(), in.stored_h(), in.stored_w(), s.groups(), item);
  const int taps = in.kernel * in.kernel, first = at.run * kPatchConvChannels;
  uint32_t window[kPatchConvMaxTaps];
  OCTET_DEVICE_UNROLL
  for (int t = 0; t < kPatchConvMaxTaps; ++t)
    window[t] = t < taps ? source_word(nchw, at.b, at.oy - in.padding + t / in.kernel,
                                       at.ox - in.padding + t % in.kernel, in.height, in.width, in.channels, scale)
                         : 0u;
  uint32_t words[kPatchConvChannels / 4];
  OCTET_DEVICE_UNROLL
  for (int w = 0; w < kPatchConvChannels / 4; ++w) {
    int32_t v[4];
    OCTET_DEVICE_UNROLL
    for (int j = 0; j < 4; ++j) {
      const int c = first + 4 * w + j;
      const uint32_t* row = reinterpret_cast<const uint32_t*>(weights + int64_t(c) * s.row_bytes);
      int32_t acc = 0;
      OCTET_DEVICE_UNROLL
      for (int t = 0; t < kPatchConvMaxTaps; ++t)
        if (t < taps) acc = dp4a_signed(window[t], row[t], acc);
      v[j] = requantize_stored_output(acc, c, at.pixel * s.out_c + c, e);
    }
    words[w] = word_through_table(pack_int8x4(v[0], v[1], v[2], v[3]), first + 4 * w, e);
  }
  store_words(out + at.pixel * s.out_c + first, words);
}

}  // namespace octet::cuda
