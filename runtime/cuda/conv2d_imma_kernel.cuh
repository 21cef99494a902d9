// The cuda-imma convolution kernel (conv2d_imma.cuh launches it). Compiled
// by nvcc for the GPU, and for the CPU by tests/cuda/cuda_on_cpu.h, which defines
// CUDA's keywords and built-ins and the primitives of tensor_core.cuh before
// including this file, so that the kernel's own code runs in the tests.
#pragma once

#include <cstdint>
#include <utility>

#include "common/requantize.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/stored_value.h"
#if defined(__CUDACC__)
#include "runtime/cuda/programmatic_launch.cuh"
#include "runtime/cuda/tensor_core.cuh"
#endif

namespace octet::cuda {

// conv2d_imma_kernel's A and B fragments of K step `s` of the stage at
// shared addresses (a, b), for this thread's `lane` of its warp tile.
template <int kTile, int kMmaRows, int kMmaCols>
__device__ __forceinline__ void load_fragments(uint32_t a, uint32_t b, int s, const igemm::WarpTile& warp, int lane,
                                               uint32_t (&a_fragment)[kMmaRows][4],
                                               uint32_t (&b_fragment)[kMmaCols][2]) {
  using igemm::tile_config;
  constexpr int kBK = tile_config(kTile).bk, kWarpsK = tile_config(kTile).warps_k;
  constexpr int kWM = tile_config(kTile).wm(), kWN = tile_config(kTile).wn();
  const int k = igemm::k_step(warp.k, s, kWarpsK) * igemm::kMmaK;
#pragma unroll
  for (int mi = 0; mi < kMmaRows; ++mi)
    ldmatrix_x4(a_fragment[mi], a + igemm::fragment_offset(warp.m * kWM, igemm::a_fragment_row(lane),
                                                           k + igemm::a_fragment_k(lane), mi, kBK));
#pragma unroll
  for (int nj = 0; nj < kMmaCols / 2; ++nj) {
    uint32_t r[4];
    ldmatrix_x4(r, b + igemm::fragment_offset(warp.n * kWN, igemm::b_fragment_row(lane),
                                              k + igemm::b_fragment_k(lane), nj, kBK));
    b_fragment[2 * nj][0] = r[0];
    b_fragment[2 * nj][1] = r[1];
    b_fragment[2 * nj + 1][0] = r[2];
    b_fragment[2 * nj + 1][1] = r[3];
  }
}

// conv2d_imma_kernel's epilogue: the accumulators (of every K slice) through
// shared memory, so that each thread reads 4 adjacent channels of a row, sums
// the slices and stores one word, requantized by `e` (bias, residual, ReLU,
// a fused activation's table), stored as stored_value.h says (two words, one
// per plane, for a wide output).
template <int kTile, int kMmaRows, int kMmaCols>
__device__ __forceinline__ void store_output_tile(const igemm::Problem& p, const igemm::BlockTile& block,
                                                  const igemm::WarpTile& warp, int thread,
                                                  const int32_t (&acc)[kMmaRows][kMmaCols][4], int8_t* shared,
                                                  const RequantEpilogue& e, int8_t* __restrict__ output) {
  using igemm::tile_config;
  constexpr igemm::TileConfig c = tile_config(kTile);
  constexpr int kBM = c.bm, kBN = c.bn, kWarpsK = c.warps_k, kThreads = c.threads();
  const int lane = thread % igemm::kWarpSize;
  cp_async_wait<0>();
  __syncthreads();
  int32_t* staging = reinterpret_cast<int32_t*>(shared);
#pragma unroll
  for (int mi = 0; mi < kMmaRows; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaCols; ++ni)
#pragma unroll
      for (int i = 0; i < 4; i += 2) {
        const int row = igemm::fragment_row(c, warp, mi) + igemm::acc_row(lane, i);
        const int col = igemm::fragment_col(c, warp, ni) + igemm::acc_col(lane, i);
        *reinterpret_cast<int2*>(staging + igemm::staging_index(warp.k, row, col, kBM, kBN)) =
            make_int2(acc[mi][ni][i], acc[mi][ni][i + 1]);
      }
  __syncthreads();

  const int tile_col = igemm::epilogue_col(thread, kBN), col = block.n0 + tile_col;
  if (col >= p.out_c) return;
  const int4 bias = *reinterpret_cast<const int4*>(e.bias + col);
  const int4 multiplier = *reinterpret_cast<const int4*>(e.multiplier + col);
  const int4 shift = *reinterpret_cast<const int4*>(e.shift + col);
  const int4 skip_multiplier = e.skip ? *reinterpret_cast<const int4*>(e.skip_multiplier + col) : make_int4(0, 0, 0, 0);
  const StoredRange range = stored_range(e.relu, e.zero_point, e.bits);
  const bool skip_unsigned = stored_unsigned(e.skip_zero_point), skip_wide = e.skip_bits > 8, wide = e.bits > 8;
  const int rows = p.rows();
  const int64_t plane = int64_t(rows) * p.out_c;  // a wide value's low bytes follow its high ones
  // The residual words of a group of passes are loaded before any of them is
  // stored: e.skip may alias nothing the compiler knows of, so a load issued
  // pass by pass would wait out its latency after every store.
  constexpr int kPasses = igemm::epilogue_passes(kBM, kBN, kThreads);
  constexpr int kGroup = kPasses < 8 ? kPasses : 8;
  static_assert(kPasses % kGroup == 0, "passes come in whole groups");
  for (int first = 0; first < kPasses; first += kGroup) {
    uint32_t skip[kGroup], skip_low[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      const int m = block.m0 + igemm::epilogue_row(thread, first + g, kThreads, kBN);
      const bool load = e.skip && m < rows;
      skip[g] = load ? *reinterpret_cast<const uint32_t*>(e.skip + m * p.out_c + col) : 0u;
      skip_low[g] = load && skip_wide ? *reinterpret_cast<const uint32_t*>(e.skip + plane + m * p.out_c + col) : 0u;
    }
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      const int row = igemm::epilogue_row(thread, first + g, kThreads, kBN), m = block.m0 + row;
      if (m >= rows) return;  // rows grow with the pass
      int4 sum = make_int4(0, 0, 0, 0);
#pragma unroll
      for (int slice = 0; slice < kWarpsK; ++slice) {
        const int4 v = *reinterpret_cast<const int4*>(staging + igemm::staging_index(slice, row, tile_col, kBM, kBN));
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      auto out = [&](int32_t a, int32_t b, int32_t m_, int32_t sm, int32_t sh, int byte) {
        const int32_t s = skip_wide ? wide_value(skip[g], skip_low[g], byte) : stored_value(skip[g], byte, skip_unsigned);
        return requantize_stored(a + b, m_, s, sm, sh, range);
      };
      const int32_t v0 = out(sum.x, bias.x, multiplier.x, skip_multiplier.x, shift.x, 0),
                    v1 = out(sum.y, bias.y, multiplier.y, skip_multiplier.y, shift.y, 1),
                    v2 = out(sum.z, bias.z, multiplier.z, skip_multiplier.z, shift.z, 2),
                    v3 = out(sum.w, bias.w, multiplier.w, skip_multiplier.w, shift.w, 3);
      uint32_t* at = reinterpret_cast<uint32_t*>(output + m * p.out_c + col);
      if (wide) {
        at[0] = pack_int8x4(high_byte(v0), high_byte(v1), high_byte(v2), high_byte(v3));
        at[plane / 4] = pack_int8x4(low_byte(v0), low_byte(v1), low_byte(v2), low_byte(v3));
      } else {
        at[0] = word_through_table(pack_int8x4(v0, v1, v2, v3), col, e);
      }
    }
  }
}

// Between a wide input's planes: every copy landed, every stage free for the
// low plane's tiles, and the high plane's sums multiplied by 256 (modulo 2^32,
// as the int32 sums of both planes are).
template <int kMmaRows, int kMmaCols>
__device__ __forceinline__ void finish_high_plane(int32_t (&acc)[kMmaRows][kMmaCols][4]) {
  cp_async_wait<0>();
  __syncthreads();
#pragma unroll
  for (int mi = 0; mi < kMmaRows; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaCols; ++ni)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mi][ni][i] = static_cast<int32_t>(static_cast<uint32_t>(acc[mi][ni][i]) << 8);
}

// Split K (igemm::SplitK): stores this block's sums of its slice, and, in the
// last of its output tile's blocks to finish, adds the other slices' into
// `acc`: true there, where the epilogue then runs, false in the others.
template <int kTile, int kRows, int kCols>
__device__ __forceinline__ bool add_split_sums(const igemm::SplitK& split, const igemm::Problem& p, int thread,
                                               int32_t (&acc)[kRows][kCols][4]) {
  constexpr int kRegisters = kRows * kCols * 4, kThreads = igemm::tile_config(kTile).threads();
  const int tile = igemm::output_tile(blockIdx.x, blockIdx.y, igemm::ceil_div(p.rows(), igemm::tile_config(kTile).bm));
  const auto sums = [&](int slice) {
    return split.partials + (int64_t(tile) * split.slices + slice) * kRegisters * kThreads + thread;
  };
  int32_t* const own = sums(blockIdx.z);
#pragma unroll
  for (int r = 0; r < kRegisters; ++r) own[r * kThreads] = acc[r / (kCols * 4)][r / 4 % kCols][r % 4];
  __threadfence();  // every thread's sums reach memory before the block counts as finished
  __syncthreads();
  unsigned finished = 0;
  if (thread == 0) finished = atomicAdd(split.arrivals + tile, 1u) + 1;
  if (!__syncthreads_or(finished == unsigned(split.slices))) return false;
  __threadfence();
  for (int slice = 0; slice < split.slices; ++slice) {
    if (slice == int(blockIdx.z)) continue;
    const int32_t* theirs = sums(slice);
#pragma unroll
    for (int r = 0; r < kRegisters; ++r)
      acc[r / (kCols * 4)][r / 4 % kCols][r % 4] = static_cast<int32_t>(  // wrapping, as the tensor cores add
          static_cast<uint32_t>(acc[r / (kCols * 4)][r / 4 % kCols][r % 4]) +
          static_cast<uint32_t>(__ldcg(theirs + r * kThreads)));  // from L2, not a stale L1
  }
  if (thread == 0) split.arrivals[tile] = 0;  // for the next launch
  return true;
}

// The rows of A (the input) one thread copies into every stage: where each
// output row's taps start in the input, and where its bytes go in a stage.
template <int kCopies>
struct InputCopies {
  igemm::RowOrigin origin[kCopies];
  int shared[kCopies];
  bool active[kCopies];
};
template <int kTile, int kCopies>
__device__ __forceinline__ InputCopies<kCopies> input_copies(const igemm::Problem& p, int thread, int m0) {
  constexpr igemm::TileConfig c = igemm::tile_config(kTile);
  InputCopies<kCopies> a;
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    const igemm::CopySlot s = igemm::copy_slot(thread, i, c.threads(), c.bk, c.access);
    a.active[i] = s.row < c.bm;
    a.origin[i] = igemm::row_origin(p, m0 + s.row);
    a.shared[i] = igemm::tile_offset(s.row, s.k, c.bk);
  }
  return a;
}

// The rows of B (the weights) one thread copies into every stage: the tile's
// row, where its K bytes start at the thread's k (0 past out_c: zero fill),
// and where they go in a stage.
template <int kCopies>
struct WeightCopies {
  int row[kCopies], start[kCopies], shared[kCopies];
  bool active[kCopies];
};
template <int kTile, int kCopies>
__device__ __forceinline__ WeightCopies<kCopies> weight_copies(const igemm::Problem& p, int thread, int n0, int k) {
  constexpr igemm::TileConfig c = igemm::tile_config(kTile);
  WeightCopies<kCopies> w;
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    const igemm::CopySlot s = igemm::copy_slot(thread, i, c.threads(), c.bk, igemm::kVectorBytes);
    w.active[i] = s.row < c.bn;
    w.row[i] = n0 + s.row;
    w.start[i] = w.row[i] < p.out_c ? igemm::b_row_start(p, w.row[i]) + k : 0;
    w.shared[i] = igemm::tile_offset(s.row, s.k, c.bk);
  }
  return w;
}

// A wgmma tile's K tiles (its warpgroup's wgmmas on each stage, as the
// mma.sync loop of conv2d_imma_kernel), once the first lookahead() tiles'
// copies were issued: `load_stage(stage, k_tile)` issues copies; A's bytes
// are uint8 where kUnsignedA. The stages start on kWgmmaStageAlignment bytes
// (at a_stages and b_stages), so that their swizzle is the one the
// descriptors name. The wgmmas of kWgmmaInFlight K tiles run on while the
// warpgroup issues the next copies and wgmmas: the copies go to the stage of
// a tile older than those.
template <int kTile, bool kUnsignedA, typename Load, int kRows, int kCols>
__device__ __forceinline__ void multiply_wgmma(uint32_t a_stages, uint32_t b_stages, int k_tiles, int thread,
                                               Load& load_stage, int32_t (&acc)[kRows][kCols][4]) {
  constexpr igemm::TileConfig c = igemm::tile_config(kTile);
  constexpr int kStages = c.stages, kAStage = c.a_stage_bytes(), kBStage = c.b_stage_bytes();
  constexpr int kLookahead = c.lookahead();
  const int warpgroup = thread / (igemm::kWarpSize * igemm::kWarpgroupWarps);
  const uint32_t a_rows = igemm::warpgroup_a_row(c, warpgroup, 0) * c.bk;
  const uint32_t b_rows = igemm::warpgroup_b_row(c, warpgroup) * c.bk;
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kLookahead - 1>();
    fence_proxy_async_shared();  // this thread's copies of tile kt, visible to the tensor cores
    // Every thread's too; the stage of tile kt + kLookahead (kt - 1 - kWgmmaInFlight) is free: every
    // warpgroup waited for its wgmmas before this barrier.
    __syncthreads();
    const uint32_t a = a_stages + (kt % kStages) * kAStage + a_rows, b = b_stages + (kt % kStages) * kBStage + b_rows;
    wgmma_fence_registers(acc);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < c.bk / igemm::kMmaK; ++s)
#pragma unroll
      for (int mi = 0; mi < kRows; ++mi)
        wgmma_m64k32<c.wgmma_n, kUnsignedA>(acc[mi],
                                            igemm::wgmma_descriptor(a + mi * igemm::kWgmmaM * c.bk + s * igemm::kMmaK),
                                            igemm::wgmma_descriptor(b + s * igemm::kMmaK));
    wgmma_commit();
    load_stage((kt + kLookahead) % kStages, kt + kLookahead);  // while the tensor cores multiply
    cp_async_commit();
    wgmma_wait<igemm::kWgmmaInFlight>();
    wgmma_fence_registers(acc);
  }
  wgmma_wait<0>();
  wgmma_fence_registers(acc);
}

// One block computes a BM x BN tile of the output (see implicit_gemm.h for
// the layout of every piece); every address below comes from there.
// kInput: how the input is stored (stored_value.h); uint8 is multiplied by the
// tensor cores as such, a wide input's planes one after the other.
// Warp tiles of 64 x 64 (128 accumulators a thread) leave a multiprocessor 2
// warps per scheduler: they load step 0's fragments before the copies of the
// next stage (kEarlyFragments), so that ldmatrix's latency passes while those
// are issued (ptxas keeps shared-memory reads after writes it cannot tell
// apart). In smaller tiles this costs registers, so resident blocks, and more
// warps hide the latency anyway.
template <int kTile, StoredInput kInput>
__global__ void __launch_bounds__(igemm::tile_config(kTile).threads())
    conv2d_imma_kernel(const igemm::Problem p, const int8_t* __restrict__ input, const int8_t* __restrict__ weights,
                       const RequantEpilogue e, int8_t* __restrict__ output, const igemm::SplitK split) {
  using igemm::kVectorBytes;
  using igemm::kWarpSize;
  using igemm::tile_config;
  constexpr igemm::TileConfig c = tile_config(kTile);
  constexpr int kBM = c.bm, kBN = c.bn, kBK = c.bk, kWarpsM = c.warps_m, kWarpsN = c.warps_n;
  constexpr int kStages = c.stages, kAccess = c.access, kThreads = c.threads(), kSteps = c.steps_per_warp();
  constexpr int kLookahead = c.lookahead();
  constexpr int kAStage = kBM * kBK, kBStage = kBN * kBK;
  constexpr int kACopies = igemm::copies_per_thread(kBM, kBK, kAccess, kThreads);
  constexpr int kBCopies = igemm::copies_per_thread(kBN, kBK, kVectorBytes, kThreads);
  constexpr int kMmaRows = c.fragment_rows(), kMmaCols = c.fragment_cols(), kWgmmaN = c.wgmma_n;
  static_assert(kMmaCols % 2 == 0, "B fragments are loaded two n8 blocks at a time");
  extern __shared__ __align__(128) int8_t shared[];
  // The pipeline's stages as shared-state-space addresses (A stages, then B).
  const uint32_t a_stages = igemm::stage_start(c, shared_address(shared)), b_stages = a_stages + kStages * kAStage;
  // Whether every thread's every copy lands in the tile (no bounds test).
  constexpr bool kAExact = kACopies * kThreads == kBM * (kBK / kAccess);
  constexpr bool kBExact = kBCopies * kThreads == kBN * (kBK / kVectorBytes);

  const int thread = threadIdx.x, lane = thread % kWarpSize;
  const igemm::BlockTile block = igemm::block_tile(blockIdx.x, blockIdx.y, kBM, kBN);
  const int slices = c.splits_k() ? split.slices : 1, slice = c.splits_k() ? int(blockIdx.z) : 0;
  const igemm::KRange k_slice = igemm::k_range(igemm::ceil_div(p.packed_depth(), kBK), slices, slice);  // or all K
  const int k_tiles = k_slice.count, k_first = k_slice.first * kBK;

  // The rows this thread copies into every stage (one k per thread).
  const InputCopies<kACopies> a_copies = input_copies<kTile, kACopies>(p, thread, block.m0);
  const auto a_start = igemm::tap_cursor(p, k_first + igemm::copy_slot(thread, 0, kThreads, kBK, kAccess).k);
  igemm::TapCursor a_cursor = a_start;
  const int8_t* a_source = input;  // of a wide input, the plane being read
  const int b_k = k_first + igemm::copy_slot(thread, 0, kThreads, kBK, kVectorBytes).k;
  const WeightCopies<kBCopies> b_copies = weight_copies<kTile, kBCopies>(p, thread, block.n0, b_k);

  // Issue the copies of K tile `k_tile` into `stage` (none past the last tile): A's (the cursor's tile), B's.
  auto load_input = [&](int stage, int k_tile) {
    if (k_tile >= k_tiles) return;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      if (!kAExact && !a_copies.active[i]) continue;
      const bool inside = igemm::a_inside(p, a_copies.origin[i], a_cursor);
      const uint32_t from = inside ? igemm::a_offset(a_copies.origin[i], a_cursor) : 0;  // unsigned: no sign extension
      cp_async_zero_fill<kAccess>(a_stages + stage * kAStage + a_copies.shared[i], a_source + from, inside);
    }
    igemm::advance(a_cursor, p, kBK);
  };
  auto load_weights = [&](int stage, int k_tile) {
    if (k_tile >= k_tiles) return;
#pragma unroll
    for (int i = 0; i < kBCopies; ++i) {
      if (!kBExact && !b_copies.active[i]) continue;
      const bool inside = igemm::b_inside(p, b_copies.row[i], k_tile * kBK + b_k);
      const uint32_t from = inside ? b_copies.start[i] + k_tile * kBK : 0;
      cp_async_zero_fill<kVectorBytes>(b_stages + stage * kBStage + b_copies.shared[i], weights + from, inside);
    }
  };
  auto load_stage = [&](int stage, int k_tile) { load_input(stage, k_tile); load_weights(stage, k_tile); };

  const igemm::WarpTile warp = igemm::warp_tile(thread / kWarpSize, kWarpsM, kWarpsN);
  int32_t acc[kMmaRows][kMmaCols][4] = {};
  // Launched programmatically, the index math above and the first stages' weights (which no kernel writes; they
  // join stage 0's group of copies) go beside the kernel before; the input waits for it.
#pragma unroll
  for (int stage = 0; stage < kLookahead; ++stage) load_weights(stage, stage);
  grid_dependency_wait();
  grid_dependency_launch_next();
  constexpr bool kEarlyFragments = kMmaRows * kMmaCols >= 32;
  // Multistage pipeline over K (a wide input's plane): kLookahead tiles in
  // flight while one is computed; A's bytes multiplied as uint8 where unsigned_a.
  auto multiply = [&](auto unsigned_a, bool weights_issued) {
    a_cursor = a_start;
#pragma unroll
    for (int stage = 0; stage < kLookahead; ++stage) {
      load_input(stage, stage);
      if (!weights_issued) load_weights(stage, stage);
      cp_async_commit();
    }
    if constexpr (kWgmmaN > 0) {
      multiply_wgmma<kTile, decltype(unsigned_a)::value>(a_stages, b_stages, k_tiles, thread, load_stage, acc);
    } else {
      uint32_t a_fragment[kMmaRows][4], b_fragment[kMmaCols][2];
      for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<kLookahead - 1>();
        __syncthreads();  // tile kt landed for every thread; stage (kt - 1) % kStages is free
        const uint32_t a = a_stages + (kt % kStages) * kAStage, b = b_stages + (kt % kStages) * kBStage;
        if constexpr (kEarlyFragments) load_fragments<kTile>(a, b, 0, warp, lane, a_fragment, b_fragment);
        load_stage((kt + kLookahead) % kStages, kt + kLookahead);
        cp_async_commit();
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
          if (s > 0 || !kEarlyFragments) load_fragments<kTile>(a, b, s, warp, lane, a_fragment, b_fragment);
#pragma unroll
          for (int mi = 0; mi < kMmaRows; ++mi)
#pragma unroll
            for (int ni = 0; ni < kMmaCols; ++ni) {
              if constexpr (decltype(unsigned_a)::value)
                mma_u8s8(acc[mi][ni], a_fragment[mi], b_fragment[ni]);
              else
                mma_s8(acc[mi][ni], a_fragment[mi], b_fragment[ni]);
            }
        }
      }
    }
  };
  if constexpr (kInput == StoredInput::kWide) {
    multiply(std::false_type{}, true);  // the high bytes, signed
    finish_high_plane(acc);
    a_source = input + int64_t(p.batch) * p.in_h * p.in_w * p.in_stride;
    multiply(std::true_type{}, false);  // the low bytes, unsigned
  } else {
    multiply(std::bool_constant<kInput == StoredInput::kUnsigned>{}, true);
  }

  if (c.splits_k() && slices > 1 && !add_split_sums<kTile>(split, p, thread, acc)) return;
  store_output_tile<kTile>(p, block, warp, thread, acc, shared, e, output);
}

namespace detail {
template <typename F, int... kTiles>
void with_tile(int tile, F f, std::integer_sequence<int, kTiles...>) {
  ((tile == kTiles ? f(std::integral_constant<int, kTiles>{}) : void()), ...);
}
}  // namespace detail

// Calls f(std::integral_constant<int, tile>) for the runtime `tile`, so that
// f can name conv2d_imma_kernel<tile, ...> (host code: the launcher and the tests).
template <typename F>
void with_tile(int tile, F f) {
  detail::with_tile(tile, f, std::make_integer_sequence<int, igemm::kTileCount>{});
}

// Calls f(tile, input) as integral constants: f can name
// conv2d_imma_kernel<tile, input>.
template <typename F>
void with_kernel(int tile, StoredInput input, F f) {
  with_tile(tile, [&](auto t) {
    using In = StoredInput;
    if (input == In::kWide)
      f(t, std::integral_constant<In, In::kWide>{});
    else if (input == In::kUnsigned)
      f(t, std::integral_constant<In, In::kUnsigned>{});
    else
      f(t, std::integral_constant<In, In::kSigned>{});
  });
}

// Every way an input can be stored, for host code that prepares every kernel.
inline constexpr StoredInput kStoredInputs[] = {StoredInput::kSigned, StoredInput::kUnsigned, StoredInput::kWide};

}  // namespace octet::cuda
