// The OrderedGemm tiles, written once over a vector type: included by
// ordered_gemm.cpp (AVX2) and ordered_gemm_avx512.cpp (AVX-512) only, each
// with its own Vec in an anonymous namespace, so the two instantiations never
// merge. A tile keeps R x V vectors of C in registers over a depth block:
// each lane is one output's chain, in depth order.
#pragma once

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "graph/ordered_gemm.h"

namespace octet::ordered_gemm_kernel {

// Every loop over R and V is unrolled, so that acc lives in registers (GCC
// otherwise keeps the array in memory and stores it on every step of k).
// A(i, k) is a[i * a_row + k] (kDirect: A row-major, all R rows present) or
// a[k * R + i] (A packed, a_row unused).
template <class Vec, int R, int V, bool kDirect>
void tile(const float* a, int64_t a_row, int64_t depth, const float* b, int64_t b_stride, float* c, int64_t c_stride,
          int rows, int last_lanes, bool accumulate) {
  using Reg = typename Vec::Reg;
  Reg acc[R][V];
#pragma GCC unroll 32
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[i][v] = accumulate && i < rows
                      ? Vec::load(c + i * c_stride + v * Vec::kLanes, v == V - 1 ? last_lanes : Vec::kLanes)
                      : Vec::zero();
  for (int64_t k = 0; k < depth; ++k, a += kDirect ? 1 : R, b += b_stride) {
    Reg bk[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bk[v] = Vec::load_full(b + v * Vec::kLanes);
#pragma GCC unroll 32
    for (int i = 0; i < R; ++i) {
      const Reg ai = Vec::broadcast(kDirect ? a + i * a_row : a + i);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[i][v] = Vec::fma(ai, bk[v], acc[i][v]);
    }
  }
#pragma GCC unroll 32
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      if (i < rows) Vec::store(c + i * c_stride + v * Vec::kLanes, acc[i][v], v == V - 1 ? last_lanes : Vec::kLanes);
}

// Rows per tile when a tile is V vectors wide: as many accumulators as the registers hold.
template <class Vec>
constexpr int rows_for(int vectors) {
  return Vec::kAccumulators / vectors;
}

using TileFunction = void (*)(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t, int, int, bool);

// The tiles R = rows_for(V) high and 1 .. V vectors wide.
template <class Vec, int V, bool kDirect, int... N>
constexpr std::array<TileFunction, V> narrow_tiles(std::integer_sequence<int, N...>) {
  return {&tile<Vec, rows_for<Vec>(V), N + 1, kDirect>...};
}

// Every row tile (R = rows_for(V)) times every column group of V vectors (the
// last one narrower, masked). A row-major A is read in place; otherwise, and
// for the last, partial row tile, its R rows are packed (zero-padded) first.
// The inner loop sweeps the smaller operand, so that it stays in cache: row
// tiles outside when A has more rows than B has columns (a conv's patches
// against its weights), column groups outside otherwise (a Gram matrix's 64
// rows against up to thousands of columns). There each column group's B block
// is copied contiguous first: B's rows are then often a multiple of 4 KB
// apart, which maps them onto a few L1 sets.
template <class Vec, int V>
void run_with(const OrderedGemm& g) {
  constexpr int R = rows_for<Vec>(V);
  constexpr std::array<TileFunction, V> direct = narrow_tiles<Vec, V, true>(std::make_integer_sequence<int, V>{});
  constexpr std::array<TileFunction, V> packed = narrow_tiles<Vec, V, false>(std::make_integer_sequence<int, V>{});
  const int64_t group = int64_t(V) * Vec::kLanes;
  const int64_t tiles = (g.rows + R - 1) / R;
  const bool columns_outside = g.rows <= g.cols;
  const auto tile_rows = [&](int64_t t) { return static_cast<int>(std::min<int64_t>(R, g.rows - t * R)); };
  const auto in_place = [&](int64_t t) { return g.a_depth_stride == 1 && tile_rows(t) == R; };
  // Packed row tiles: all of them where column groups are outside, one at a time otherwise.
  std::vector<float> apack;
  const auto packed_tile = [&](int64_t t) { return apack.data() + (columns_outside ? t * R * g.depth : 0); };
  const auto pack_a = [&](int64_t t) {
    float* out = packed_tile(t);
    for (int64_t k = 0; k < g.depth; ++k)
      for (int i = 0; i < R; ++i)
        out[k * R + i] = i < tile_rows(t) ? g.a[(t * R + i) * g.a_row_stride + k * g.a_depth_stride] : 0.0f;
  };
  const auto run_tile = [&](int64_t t, int64_t j0, const float* b, int64_t b_stride) {
    const int64_t width = std::min(group, g.cols - j0);
    const int64_t vectors = (width + Vec::kLanes - 1) / Vec::kLanes;
    const int last_lanes = static_cast<int>(width - (vectors - 1) * Vec::kLanes);
    const bool direct_a = in_place(t);
    const float* a = direct_a ? g.a + t * R * g.a_row_stride : packed_tile(t);
    (direct_a ? direct : packed)[vectors - 1](a, g.a_row_stride, g.depth, b, b_stride,
                                              g.c + t * R * g.c_row_stride + j0, g.c_row_stride, tile_rows(t),
                                              last_lanes, g.accumulate);
  };
  if (!columns_outside) {
    apack.resize(static_cast<size_t>(R * g.depth));
    for (int64_t t = 0; t < tiles; ++t) {
      if (!in_place(t)) pack_a(t);
      for (int64_t j0 = 0; j0 < g.cols; j0 += group) run_tile(t, j0, g.b + j0, g.b_depth_stride);
    }
    return;
  }
  apack.resize(static_cast<size_t>(tiles * R * g.depth));
  for (int64_t t = 0; t < tiles; ++t)
    if (!in_place(t)) pack_a(t);
  std::vector<float> bpack(static_cast<size_t>(g.depth * group));
  for (int64_t j0 = 0; j0 < g.cols; j0 += group) {
    const int64_t padded_width = std::min(group, (g.cols - j0 + Vec::kLanes - 1) / Vec::kLanes * Vec::kLanes);
    for (int64_t k = 0; k < g.depth; ++k)
      std::copy_n(g.b + k * g.b_depth_stride + j0, padded_width, bpack.data() + k * group);
    for (int64_t t = 0; t < tiles; ++t) run_tile(t, j0, bpack.data(), group);
  }
}

template <class Vec>
void run_block(const OrderedGemm& g) {
  const int64_t vectors = (g.cols + Vec::kLanes - 1) / Vec::kLanes;
  static_assert(Vec::kMaxVectors == 2 || Vec::kMaxVectors == 4);
  if (vectors <= 1) return run_with<Vec, 1>(g);
  if constexpr (Vec::kMaxVectors == 2) {
    return run_with<Vec, 2>(g);
  } else {
    if (vectors == 2) return run_with<Vec, 2>(g);
    if (vectors == 3) return run_with<Vec, 3>(g);
    return run_with<Vec, 4>(g);
  }
}

// Depth in blocks, so that the rows of B a block reads stay in cache across
// row tiles (256 measured best on 512-wide B); each block continues the
// chains in C, so the summation order is unchanged.
constexpr int64_t kDepthBlock = 256;

template <class Vec>
void run(const OrderedGemm& g) {
  const int64_t block = kDepthBlock;
  for (int64_t k0 = 0; k0 < g.depth || k0 == 0; k0 += block) {
    OrderedGemm part = g;
    part.a += k0 * g.a_depth_stride;
    part.b += k0 * g.b_depth_stride;
    part.depth = std::min(block, g.depth - k0);
    part.accumulate = g.accumulate || k0 > 0;
    run_block<Vec>(part);
  }
}

}  // namespace octet::ordered_gemm_kernel
