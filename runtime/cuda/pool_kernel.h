// Max and average pools on CUDA: one thread per `Lanes` stored channels of
// one output pixel, 16 (one 16-byte load per window pixel) where the stored
// channels allow, else 4. Windows as graph/ops/pool2d.h defines them: kernel,
// stride and zero padding down and across (graph.h's PoolAxis), the padding
// adding nothing (the output shape says whether
// ceil_mode made a last, partial window); an average divides by its window's
// count (graph/ops/pool2d.h's pool_count). The global average pool: one
// thread per (image, channel). Plain C++ with host+device
// functions, so that the host executor of the device layout (tests/ops) runs
// the kernels' own arithmetic on any machine.
#pragma once

#include <cstdint>

#include "graph/graph.h"
#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/pixel_item.h"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

// NHWC, stored as stored_value.h says; c is the stored channel count, a
// multiple of 4 (padding channels hold zeros and pool to zeros).
struct PoolShape {
  int64_t batch = 0;
  int h = 0, w = 0, c = 0;
  PoolAxis rows, columns;
  int out_h = 0, out_w = 0;
  int32_t in_zero_point = 0, out_zero_point = 0;  // a max pool's are equal
  bool exclude_padding = false;                   // an average pool's padding is not counted
  OCTET_HOST_DEVICE int lanes() const { return c % 16 == 0 ? 16 : 4; }
  OCTET_HOST_DEVICE int64_t items() const { return batch * out_h * out_w * (c / lanes()); }
};

// One output's window along one dimension inside the input, [begin, end),
// and its length with padding: graph/ops/pool2d.h's pool_span.
struct PoolWindow {
  int begin, end, counted;
};
OCTET_HOST_DEVICE PoolWindow pool_window(int out_index, int size, const PoolAxis& a) {
  const int start = out_index * a.stride - a.padding;
  const int stop = start + a.kernel < size + a.padding ? start + a.kernel : size + a.padding;
  return {start > 0 ? start : 0, stop < size ? stop : size, stop - start};
}

// An average pool's multipliers, as graph/ops/pool2d.h's avg_pool_multiplier
// reads them: one for every window, or one for each count from 1 (a kernel
// argument: at most kMostPoolMultipliers, an 8x8 kernel's).
constexpr int kMostPoolMultipliers = 64;
struct PoolMultipliers {
  int32_t by_count[kMostPoolMultipliers];
  int count;
  int32_t shift;
};

// The multiplier of thread `item`'s window.
template <int Lanes>
OCTET_HOST_DEVICE int32_t pool_item_multiplier(const PoolShape& s, const PoolMultipliers& m, int64_t item) {
  if (m.count == 1) return m.by_count[0];
  const PixelItem at = pixel_item(s.items(), s.out_h, s.out_w, s.c / Lanes, item);
  const PoolWindow ys = pool_window(at.oy, s.h, s.rows), xs = pool_window(at.ox, s.w, s.columns);
  const int counted = s.exclude_padding ? (ys.end - ys.begin) * (xs.end - xs.begin) : ys.counted * xs.counted;
  return m.by_count[counted - 1];
}

// Calls visit(words) with the Lanes / 4 words of each pixel inside thread
// `item`'s window; returns the offset of the thread's output bytes (item x Lanes).
template <int Lanes, typename Visit>
OCTET_HOST_DEVICE int64_t for_each_in_pool_window(const int8_t* __restrict__ in, const PoolShape& s, int64_t item,
                                                  Visit&& visit) {
  const PixelItem at = pixel_item(s.items(), s.out_h, s.out_w, s.c / Lanes, item);
  const PoolWindow ys = pool_window(at.oy, s.h, s.rows), xs = pool_window(at.ox, s.w, s.columns);
  for (int iy = ys.begin; iy < ys.end; ++iy) {
    const int8_t* row = in + (at.b * s.h + iy) * int64_t(s.w) * s.c + at.run * Lanes;
    for (int ix = xs.begin; ix < xs.end; ++ix) {
      uint32_t words[Lanes / 4];
      load_words(row + int64_t(ix) * s.c, words);
      visit(words);
    }
  }
  return item * Lanes;
}

template <int Lanes>
OCTET_HOST_DEVICE void max_pool_item(const int8_t* __restrict__ in, const PoolShape& s, int64_t item,
                                     int8_t* __restrict__ out) {
  const bool is_unsigned = stored_unsigned(s.in_zero_point);
  uint32_t best[Lanes / 4];
  for (uint32_t& v : best) v = is_unsigned ? 0u : 0x80808080u;  // the lowest value in each byte
  const int64_t at = for_each_in_pool_window<Lanes>(in, s, item, [&](const uint32_t(&words)[Lanes / 4]) {
    for (int i = 0; i < Lanes / 4; ++i)
      best[i] = is_unsigned ? max_uint8x4(best[i], words[i]) : max_int8x4(best[i], words[i]);
  });
  store_words(out + at, best);
}

// The int32 sum of each window, requantized with its count's multiplier.
template <int Lanes>
OCTET_HOST_DEVICE void avg_pool_item(const int8_t* __restrict__ in, const PoolShape& s, const PoolMultipliers& m,
                                     int64_t item, int8_t* __restrict__ out) {
  const int32_t multiplier = pool_item_multiplier<Lanes>(s, m, item);
  const bool is_unsigned = stored_unsigned(s.in_zero_point);
  int32_t sum[Lanes] = {};
  const int64_t at = for_each_in_pool_window<Lanes>(in, s, item, [&](const uint32_t(&words)[Lanes / 4]) {
    for (int j = 0; j < Lanes; ++j) sum[j] += stored_value(words[j / 4], j % 4, is_unsigned);
  });
  const StoredRange range = stored_range(false, s.out_zero_point);
  uint32_t q[Lanes / 4];
  for (int i = 0; i < Lanes / 4; ++i) {
    int32_t v[4];
    for (int j = 0; j < 4; ++j) v[j] = requantize_stored(sum[4 * i + j], multiplier, 0, 0, m.shift, range);
    q[i] = pack_int8x4(v[0], v[1], v[2], v[3]);
  }
  store_words(out + at, q);
}

// GlobalAvgPool: the int32 sum of one (image, channel)'s `plane` pixels of
// `c` stored channels, requantized; adjacent threads read adjacent channels.
struct GlobalPoolShape {
  int64_t plane;
  int c;
  bool unsigned_in;
  int32_t multiplier, shift;
  StoredRange range;
};
OCTET_HOST_DEVICE void global_avg_pool_element(const int8_t* __restrict__ in, const GlobalPoolShape& s, int64_t e,
                                               int8_t* __restrict__ out) {
  const int64_t n = e / s.c;
  const int8_t* x = in + n * s.plane * s.c + (e - n * s.c);
  int32_t sum = 0;
  for (int64_t p = 0; p < s.plane; ++p) sum += stored_value(x[p * s.c], s.unsigned_in);
  out[e] = static_cast<int8_t>(requantize_stored(sum, s.multiplier, 0, 0, s.shift, s.range));
}

// Calls visitor.template run<Lanes>() with the instantiation that runs `s`:
// the CUDA launcher and the host executor of the tests pick the same one.
template <typename Visitor>
void visit_pool_variant(const PoolShape& s, Visitor&& visitor) {
  if (s.lanes() == 16) return visitor.template run<16>();
  visitor.template run<4>();
}

}  // namespace octet::cuda
