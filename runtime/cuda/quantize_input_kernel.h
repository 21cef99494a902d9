// The float NCHW input quantized into NHWC int8 with stored (padded)
// channels, on CUDA: one thread per `Pixels` adjacent pixels of one image, 4
// where the image's plane allows (16-byte loads from each channel's plane),
// else 1. Plain C++ with host+device functions, so that the host executor of
// the device layout (tests/ops) runs the kernel's own arithmetic.
#pragma once

#include <cstdint>

#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/pixel_item.h"

namespace octet::cuda {

struct InputShape {
  int64_t batch = 0, plane = 0;  // plane: height x width
  int channels = 0, stored_c = 0;  // stored_c: a multiple of 4, at least channels
  OCTET_HOST_DEVICE int pixels_per_item() const { return plane % 4 == 0 ? 4 : 1; }
  OCTET_HOST_DEVICE int64_t items() const { return batch * plane / pixels_per_item(); }
};

// Thread `item`: pixels [item x Pixels, + Pixels) of the batch (one image's,
// as Pixels divides the plane), every stored channel.
template <int Pixels>
OCTET_HOST_DEVICE void quantize_input_item(const float* __restrict__ nchw, const InputShape& s, float scale,
                                           int64_t item, int8_t* __restrict__ nhwc) {
  const int64_t first = item * Pixels;
  // Image b, pixels from ox x Pixels of its plane (a row of plane / Pixels items).
  const PixelItem at = pixel_item(s.items(), 1, static_cast<int>(s.plane / Pixels), 1, item);
  const float* x = nchw + at.b * s.channels * s.plane + int64_t(at.ox) * Pixels;
  uint32_t* out = reinterpret_cast<uint32_t*>(nhwc + first * s.stored_c);
  const int words = s.stored_c / 4;
  for (int c = 0; c < s.stored_c; c += 4) {
    int32_t q[4][Pixels];
    for (int j = 0; j < 4; ++j) {
      float v[Pixels] = {};
      if (c + j < s.channels) load_words(x + (c + j) * s.plane, v);  // adjacent pixels of one plane
      for (int p = 0; p < Pixels; ++p) q[j][p] = c + j < s.channels ? ::octet::quantize_input(v[p], scale) : 0;
    }
    uint32_t packed[Pixels];
    for (int p = 0; p < Pixels; ++p) packed[p] = pack_int8x4(q[0][p], q[1][p], q[2][p], q[3][p]);
    if (words == 1) {  // the pixels' words are adjacent: one store
      store_words(nhwc + first * 4, packed);
      continue;
    }
    for (int p = 0; p < Pixels; ++p) out[p * words + c / 4] = packed[p];
  }
}

// Into cuda-imma's folded images (folded_input.h), one thread per stored
// pixel, its bytes stored 16 at a time (zeros past the image). Space to
// depth: 2 x 2 source pixels of 4 bytes.
struct SpaceToDepthInput {
  int64_t batch = 0;
  int height = 0, width = 0, channels = 0;  // channels: at most 4
  OCTET_HOST_DEVICE int stored_h() const { return (height + 1) / 2; }
  OCTET_HOST_DEVICE int stored_w() const { return (width + 1) / 2; }
  OCTET_HOST_DEVICE int64_t items() const { return batch * stored_h() * stored_w(); }
};

// Source pixel (y, x) of image b as one word of 4 channels (zeros outside the image).
OCTET_HOST_DEVICE uint32_t source_word(const float* __restrict__ nchw, int64_t b, int y, int x, int height, int width,
                                       int channels, float scale) {
  const bool inside = y >= 0 && y < height && x >= 0 && x < width;
  int32_t q[4];
  OCTET_DEVICE_UNROLL
  for (int c = 0; c < 4; ++c)
    q[c] = inside && c < channels
               ? ::octet::quantize_input(nchw[((b * channels + c) * height + y) * int64_t(width) + x], scale)
               : 0;
  return pack_int8x4(q[0], q[1], q[2], q[3]);
}

OCTET_HOST_DEVICE void space_to_depth_input_item(const float* __restrict__ nchw, const SpaceToDepthInput& s,
                                                 float scale, int64_t item, int8_t* __restrict__ stored) {
  const PixelItem at = pixel_item(s.items(), s.stored_h(), s.stored_w(), 1, item);
  uint32_t words[4];
  OCTET_DEVICE_UNROLL
  for (int part = 0; part < 4; ++part)
    words[part] =
        source_word(nchw, at.b, 2 * at.oy + part / 2, 2 * at.ox + part % 2, s.height, s.width, s.channels, scale);
  store_words(stored + item * 16, words);
}

// Patches: the kernel x kernel window of stride-1 output (oy, ox), tap t's
// 4 bytes at byte 4t, padded to stored_c (a multiple of 16, at most 64).
struct PatchInput {
  int64_t batch = 0;
  int height = 0, width = 0, channels = 0, kernel = 0, padding = 0, stored_c = 0;
  OCTET_HOST_DEVICE int stored_h() const { return height + 2 * padding - kernel + 1; }
  OCTET_HOST_DEVICE int stored_w() const { return width + 2 * padding - kernel + 1; }
  OCTET_HOST_DEVICE int64_t items() const { return batch * stored_h() * stored_w(); }
};

OCTET_HOST_DEVICE void patch_input_item(const float* __restrict__ nchw, const PatchInput& s, float scale,
                                        int64_t item, int8_t* __restrict__ stored) {
  const PixelItem at = pixel_item(s.items(), s.stored_h(), s.stored_w(), 1, item);
  const int taps = s.kernel * s.kernel;
  OCTET_DEVICE_UNROLL
  for (int group = 0; group < 4; ++group) {  // 16 bytes: taps 4 x group .. + 3
    if (16 * group >= s.stored_c) break;
    uint32_t words[4];
    OCTET_DEVICE_UNROLL
    for (int j = 0; j < 4; ++j) {
      const int t = 4 * group + j;
      words[j] = t < taps ? source_word(nchw, at.b, at.oy - s.padding + t / s.kernel,
                                        at.ox - s.padding + t % s.kernel, s.height, s.width, s.channels, scale)
                          : 0u;
    }
    store_words(stored + item * s.stored_c + 16 * group, words);
  }
}

template <typename Visitor>
void visit_input_variant(const InputShape& s, Visitor&& visitor) {
  if (s.pixels_per_item() == 4) return visitor.template run<4>();
  visitor.template run<1>();
}

}  // namespace octet::cuda
