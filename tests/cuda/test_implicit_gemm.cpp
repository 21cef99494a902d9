// The index math of the cuda-imma convolution (runtime/cuda/implicit_gemm.h)
// on the CPU, without nvcc or a GPU: a host emulation of the kernel's thread
// blocks (conv2d_imma_kernel.cuh) copies tiles into an emulated shared memory
// with the same per-thread index functions, feeds every warp lane's fragments
// through ldmatrix and mma.m16n8k32 as the PTX ISA defines them
// (tests/cuda/ptx_isa.h), and runs the epilogue. Its int32 accumulators must
// equal a direct convolution's and its int8 outputs the CPU runtime's, for
// every mma.sync tile configuration that can run each shape of
// tests/cuda/imma_cases.h, and its shared-memory accesses must be free of
// bank conflicts. (The kernel's own code runs on the CPU in
// test_imma_kernel_on_cpu.cpp, with every tile, the wgmma ones too.)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <set>

#include "common/requantize.h"
#include "runtime/cuda/implicit_gemm.h"
#include "tests/cuda/imma_cases.h"
#include "tests/cuda/ptx_isa.h"
#include "tests/support/test_util.h"

namespace octet::cuda::igemm {
namespace {

using ptx::Registers4;

// Shared memory bank conflicts of one phase of `bytes`-wide accesses (16:
// 8 threads, as ldmatrix rows and cp.async copies; 8: a half-warp): the
// 4-byte banks of all their words must differ.
bool conflict_free(const std::vector<int>& addresses, int bytes) {
  std::set<int> banks;
  for (int a : addresses)
    for (int word = 0; word < bytes / 4; ++word) banks.insert((a / 4 + word) % 32);
  return banks.size() == addresses.size() * size_t(bytes / 4);
}

// ---------------------------------------------------------------- one thread block, as conv2d_imma_kernel

struct BlockResult {
  std::vector<int32_t> acc;  // [bm][bn], the K slices summed
  bool conflict_free_ldmatrix = true, conflict_free_copies = true, conflict_free_staging = true;
};

// Emulates block (bx, by) of tile `tile` on `p`, writing its int8 outputs
// into `output` ([M][out_c]) as the kernel's epilogue does.
BlockResult run_block(const Problem& p, int tile, const Data& d, int bx, int by, std::vector<int8_t>& output) {
  const TileConfig T = tile_config(tile);
  const int threads = T.threads(), a_stage = T.a_stage_bytes(), b_stage = T.b_stage_bytes();
  const int a_copies = copies_per_thread(T.bm, T.bk, T.access, threads);
  const int b_copies = copies_per_thread(T.bn, T.bk, kVectorBytes, threads);
  const int mma_rows = T.wm() / kMmaM, mma_cols = T.wn() / kMmaN;
  const BlockTile block = block_tile(bx, by, T.bm, T.bn);
  const int k_tiles = ceil_div(p.packed_depth(), T.bk);
  std::vector<int8_t> shared(static_cast<size_t>(T.shared_bytes()), int8_t{0x77});
  BlockResult result;

  // Per-thread loader state.
  struct ThreadState {
    std::vector<RowOrigin> a_origin;
    std::vector<int> a_shared, b_row, b_start, b_shared;
    std::vector<bool> a_active, b_active;
    TapCursor cursor;
    int b_k;
  };
  std::vector<ThreadState> state(threads);
  for (int t = 0; t < threads; ++t) {
    ThreadState& s = state[t];
    for (int i = 0; i < a_copies; ++i) {
      const CopySlot slot = copy_slot(t, i, threads, T.bk, T.access);
      EXPECT_EQ(slot.k, copy_slot(t, 0, threads, T.bk, T.access).k) << "a thread's k changes between its copies";
      // The kernel skips the bounds test when the copies cover the tile exactly.
      if (a_copies * threads == T.bm * (T.bk / T.access)) {
        EXPECT_LT(slot.row, T.bm);
      }
      s.a_active.push_back(slot.row < T.bm);
      s.a_origin.push_back(row_origin(p, block.m0 + slot.row));
      s.a_shared.push_back(tile_offset(slot.row, slot.k, T.bk));
    }
    s.cursor = tap_cursor(p, copy_slot(t, 0, threads, T.bk, T.access).k);
    for (int i = 0; i < b_copies; ++i) {
      const CopySlot slot = copy_slot(t, i, threads, T.bk, kVectorBytes);
      if (b_copies * threads == T.bn * (T.bk / kVectorBytes)) {
        EXPECT_LT(slot.row, T.bn);
      }
      s.b_active.push_back(slot.row < T.bn);
      s.b_row.push_back(block.n0 + slot.row);
      s.b_start.push_back(block.n0 + slot.row < p.out_c
                              ? b_row_start(p, block.n0 + slot.row) + copy_slot(t, 0, threads, T.bk, kVectorBytes).k
                              : 0);
      s.b_shared.push_back(tile_offset(slot.row, slot.k, T.bk));
    }
    s.b_k = copy_slot(t, 0, threads, T.bk, kVectorBytes).k;
  }

  auto copy = [&](int to, const std::vector<int8_t>& from_buffer, int from, int bytes, int region_end) {
    EXPECT_TRUE(to >= 0 && to + bytes <= region_end && to % bytes == 0) << "copy to shared offset " << to;
    for (int b = 0; b < bytes; ++b) shared[to + b] = from < 0 ? int8_t{0} : from_buffer.at(size_t(from + b));
  };
  auto load_stage = [&](int stage, int k_tile) {
    if (k_tile >= k_tiles) return;
    const int a_base = stage * a_stage, b_base = T.stages * a_stage + stage * b_stage;
    for (int t = 0; t < threads; ++t) {
      ThreadState& s = state[t];
      for (int i = 0; i < a_copies; ++i)
        if (s.a_active[i])
          copy(a_base + s.a_shared[i], d.device_input,
               a_inside(p, s.a_origin[i], s.cursor) ? a_offset(s.a_origin[i], s.cursor) : -1, T.access,
               a_base + a_stage);
      advance(s.cursor, p, T.bk);
      for (int i = 0; i < b_copies; ++i)
        if (s.b_active[i])
          copy(b_base + s.b_shared[i], d.packed,
               b_inside(p, s.b_row[i], k_tile * T.bk + s.b_k) ? s.b_start[i] + k_tile * T.bk : -1, kVectorBytes,
               b_base + b_stage);
    }
    // Bank conflicts of the 16-byte copies: each 8-thread phase of a warp.
    for (int t0 = 0; t0 < threads && T.access == kVectorBytes; t0 += 8)
      for (int i = 0; i < a_copies; ++i) {
        std::vector<int> phase;
        for (int t = t0; t < t0 + 8; ++t)
          if (state[t].a_active[i]) phase.push_back(state[t].a_shared[i]);
        result.conflict_free_copies &= conflict_free(phase, kVectorBytes);
      }
  };

  // Accumulators per warp: [mi][ni] -> 32 lanes x 4 registers.
  std::vector<std::vector<std::array<Registers4, 32>>> acc(
      T.warps(), std::vector<std::array<Registers4, 32>>(mma_rows * mma_cols));
  for (int stage = 0; stage < T.stages - 1; ++stage) load_stage(stage, stage);
  for (int kt = 0; kt < k_tiles; ++kt) {
    load_stage((kt + T.stages - 1) % T.stages, kt + T.stages - 1);
    const int a_base = (kt % T.stages) * a_stage, b_base = T.stages * a_stage + (kt % T.stages) * b_stage;
    for (int w = 0; w < T.warps(); ++w) {
      const WarpTile warp = warp_tile(w, T.warps_m, T.warps_n);
      for (int s = 0; s < T.steps_per_warp(); ++s) {
        const int k = k_step(warp.k, s, T.warps_k) * kMmaK;
        std::vector<std::array<Registers4, 32>> a(mma_rows);
        std::vector<std::array<ptx::Registers2, 32>> b(mma_cols);
        // One ldmatrix.x4 of 16-row block `block` below row0, its lanes' rows and ks from the header.
        auto load = [&](int base, int row0, int (*lane_row)(int), int (*lane_k)(int), int block) {
          std::array<int, 32> address;
          for (int lane = 0; lane < 32; ++lane) {
            const int at = fragment_offset(row0, lane_row(lane), k + lane_k(lane), block, T.bk);
            EXPECT_EQ(at, tile_offset(row0 + block * 16 + lane_row(lane), k + lane_k(lane), T.bk));
            address[lane] = base + at;
          }
          for (int j = 0; j < 4; ++j)
            result.conflict_free_ldmatrix &= conflict_free(std::vector<int>(&address[8 * j], &address[8 * j + 8]), 16);
          return ptx::ldmatrix_x4(shared.data(), shared.size(), address);
        };
        for (int mi = 0; mi < mma_rows; ++mi) a[mi] = load(a_base, warp.m * T.wm(), a_fragment_row, a_fragment_k, mi);
        for (int nj = 0; nj < mma_cols / 2; ++nj) {
          const std::array<Registers4, 32> r = load(b_base, warp.n * T.wn(), b_fragment_row, b_fragment_k, nj);
          for (int lane = 0; lane < 32; ++lane) {
            b[2 * nj][lane] = {r[lane][0], r[lane][1]};
            b[2 * nj + 1][lane] = {r[lane][2], r[lane][3]};
          }
        }
        for (int mi = 0; mi < mma_rows; ++mi)
          for (int ni = 0; ni < mma_cols; ++ni) ptx::mma_m16n8k32_s8(acc[w][mi * mma_cols + ni], a[mi], b[ni]);
      }
    }
  }

  // Epilogue: stage through the same shared memory, then 4 channels per thread.
  std::vector<int32_t> staging(shared.size() / 4, 0x7777);
  for (int w = 0; w < T.warps(); ++w) {
    const WarpTile warp = warp_tile(w, T.warps_m, T.warps_n);
    for (int mi = 0; mi < mma_rows; ++mi)
      for (int ni = 0; ni < mma_cols; ++ni)
        for (int i = 0; i < 4; i += 2) {  // registers i, i + 1 in one 8-byte store
          std::array<int, 32> address;
          for (int lane = 0; lane < 32; ++lane) {
            const int row = warp.m * T.wm() + mi * kMmaM + acc_row(lane, i);
            const int col = warp.n * T.wn() + ni * kMmaN + acc_col(lane, i);
            EXPECT_EQ(acc_row(lane, i + 1), acc_row(lane, i));
            EXPECT_EQ(acc_col(lane, i + 1), acc_col(lane, i) + 1);
            const int at = staging_index(warp.k, row, col, T.bm, T.bn);
            address[lane] = 4 * at;
            staging.at(size_t(at)) = int32_t(acc[w][mi * mma_cols + ni][lane][i]);
            staging.at(size_t(at) + 1) = int32_t(acc[w][mi * mma_cols + ni][lane][i + 1]);
          }
          for (int half = 0; half < 32; half += 16)
            result.conflict_free_staging &=
                conflict_free(std::vector<int>(&address[half], &address[half + 16]), 8);
        }
  }
  // The 16-byte reads of the staging tile: each 8-thread phase of a warp.
  for (int pass = 0; pass < epilogue_passes(T.bm, T.bn, threads); ++pass)
    for (int slice = 0; slice < T.warps_k; ++slice)
      for (int t0 = 0; t0 < threads; t0 += 8) {
        std::vector<int> phase;
        for (int t = t0; t < t0 + 8; ++t) {
          const int row = epilogue_row(t, pass, threads, T.bn);
          if (block.n0 + epilogue_col(t, T.bn) < p.out_c && block.m0 + row < p.rows())
            phase.push_back(4 * staging_index(slice, row, epilogue_col(t, T.bn), T.bm, T.bn));
        }
        result.conflict_free_staging &= conflict_free(phase, 16);
      }
  result.acc.assign(size_t(T.bm) * T.bn, 0);
  for (int t = 0; t < threads; ++t) {
    const int tile_col = epilogue_col(t, T.bn), col = block.n0 + tile_col;
    if (col >= p.out_c) continue;
    for (int pass = 0; pass < epilogue_passes(T.bm, T.bn, threads); ++pass) {
      const int row = epilogue_row(t, pass, threads, T.bn), m = block.m0 + row;
      if (m >= p.rows()) break;
      for (int x = 0; x < 4; ++x) {
        int32_t sum = 0;
        for (int slice = 0; slice < T.warps_k; ++slice)
          sum += staging.at(size_t(staging_index(slice, row, tile_col + x, T.bm, T.bn)));
        result.acc[size_t(row) * T.bn + tile_col + x] = sum;
        const int at = m * p.out_c + col + x;
        const int32_t skip = d.device_skip.empty() ? 0 : d.device_skip[at];
        output.at(size_t(at)) = static_cast<int8_t>(requantize(sum + d.bias[col + x], d.multiplier[col + x], skip,
                                                               d.device_skip.empty() ? 0 : d.skip_multiplier[col + x],
                                                               d.shift[col + x], d.relu ? 0 : -128));
      }
    }
  }
  return result;
}

// Every block of the grid: accumulators against the direct convolution, the
// int8 outputs against the CPU runtime.
void expect_tile_matches(const Conv& v, int tile, bool residual, bool relu, uint64_t seed) {
  const Problem p = problem_of(v);
  ASSERT_EQ(unsupported(p, tile), "");
  const TileConfig T = tile_config(tile);
  const Data d = make_data(v, p, residual, relu, seed);
  const std::vector<int32_t> expected_acc = direct_accumulators(v, p, d);
  std::vector<int8_t> output(size_t(p.rows()) * p.out_c, int8_t{0x33});
  bool ldmatrix_ok = true, copies_ok = true, staging_ok = true;
  for (int bx = 0; bx < ceil_div(p.rows(), T.bm); ++bx)
    for (int by = 0; by < ceil_div(p.out_c, T.bn); ++by) {
      const BlockResult r = run_block(p, tile, d, bx, by, output);
      ldmatrix_ok &= r.conflict_free_ldmatrix;
      copies_ok &= r.conflict_free_copies;
      staging_ok &= r.conflict_free_staging;
      for (int row = 0; row < T.bm; ++row)
        for (int col = 0; col < T.bn; ++col) {
          const int m = bx * T.bm + row, n = by * T.bn + col;
          const int32_t expected = m < p.rows() && n < v.out_c ? expected_acc[size_t(m) * v.out_c + n] : 0;
          ASSERT_EQ(r.acc[size_t(row) * T.bn + col], expected) << "accumulator of pixel " << m << ", channel " << n;
        }
    }
  EXPECT_TRUE(ldmatrix_ok) << "ldmatrix phases with shared-memory bank conflicts";
  EXPECT_TRUE(copies_ok) << "cp.async phases with shared-memory bank conflicts";
  EXPECT_TRUE(staging_ok) << "epilogue staging stores or reads with shared-memory bank conflicts";
  const std::vector<int8_t> expected = cpu_outputs(v, p, d);
  for (int m = 0; m < p.rows(); ++m)
    for (int n = 0; n < p.out_c; ++n) {
      const int8_t want = n < v.out_c ? expected[size_t(m) * v.out_c + n] : int8_t{0};
      ASSERT_EQ(int(output[size_t(m) * p.out_c + n]), int(want)) << "output of pixel " << m << ", channel " << n;
    }
}

class ImplicitGemmEmulation : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ImplicitGemmEmulation, MatchesTheDirectConvolutionAndTheCpuRuntime) {
  const auto [conv, tile] = GetParam();
  const Conv& v = kConvs[conv];
  expect_tile_matches(v, tile, conv % 2 == 1, conv % 3 != 2, 1000 + 17 * conv + tile);
}

std::vector<std::tuple<int, int>> runnable_shapes_and_mma_tiles() {
  std::vector<std::tuple<int, int>> pairs;
  for (const auto& pair : runnable_shapes_and_tiles())
    if (tile_config(std::get<1>(pair)).wgmma_n == 0) pairs.push_back(pair);
  return pairs;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ImplicitGemmEmulation, ::testing::ValuesIn(runnable_shapes_and_mma_tiles()),
                         [](const auto& info) { return shape_and_tile_name(info.param); });

// Every shape of the table runs on at least one tile, and every tile on at least one shape.
TEST(ImplicitGemm, EveryShapeAndEveryTileIsCovered) {
  std::vector<bool> tile_used(kTileCount, false);
  for (const Conv& v : kConvs) {
    bool any = false;
    for (int t = 0; t < kTileCount; ++t)
      if (unsupported(problem_of(v), t).empty()) any = tile_used[t] = true;
    EXPECT_TRUE(any) << conv_name(v);
  }
  for (int t = 0; t < kTileCount; ++t) EXPECT_TRUE(tile_used[t]) << tile_config(t).name;
}

// The pairs of the table that get no test are refused for one reason only:
// the tile copies pieces of the other width (4-byte words or 16-byte
// vectors). Any other refusal would silently take shapes out of the tests.
TEST(ImplicitGemm, TheTableLeavesOutOnlyPairsOfTheOtherAccessWidth) {
  const std::vector<std::tuple<int, int>> runnable = runnable_shapes_and_tiles();
  size_t refused = 0;
  for (int conv = 0; conv < int(std::size(kConvs)); ++conv)
    for (int t = 0; t < kTileCount; ++t) {
      const Problem p = problem_of(kConvs[conv]);
      const std::string why = unsupported(p, t);
      const bool generated = std::find(runnable.begin(), runnable.end(), std::make_tuple(conv, t)) != runnable.end();
      EXPECT_EQ(generated, why.empty()) << shape_and_tile_name({conv, t});
      if (why.empty()) continue;
      ++refused;
      EXPECT_NE(tile_config(t).access, p.access()) << shape_and_tile_name({conv, t}) << ": " << why;
      const std::string width = "needs " + std::to_string(p.access()) + "-byte ones";
      EXPECT_NE(why.find(width), std::string::npos) << shape_and_tile_name({conv, t}) << ": " << why;
    }
  EXPECT_EQ(runnable.size() + refused, std::size(kConvs) * size_t(kTileCount));
  EXPECT_GT(refused, 0u) << "the table has no shape read in words, or no tile reading words";
}

// ---------------------------------------------------------------- the pieces on their own

TEST(ImplicitGemm, EveryTileConfigurationIsConsistent) {
  std::set<std::string> names;
  for (int t = 0; t < kTileCount; ++t) {
    const TileConfig c = tile_config(t);
    EXPECT_EQ(tile_invalid(c), "") << c.name;
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(tile_index(c.name), t);
    // Fits every sm_8x/sm_90 GPU (sm_86 and sm_89 allow 99 KB per block); a wgmma tile, sm_90's 227 KB.
    EXPECT_LE(c.shared_bytes(), (c.wgmma_n ? 227 : 99) * 1024) << c.name;
    EXPECT_LE(c.threads(), 256) << c.name;
  }
  EXPECT_EQ(tile_index("m1n1k1"), -1);
}

// A wgmma tile's descriptors, decoded as the PTX ISA defines them, name the
// bytes where the copies put each (row, k) of a stage (tile_offset), at every
// k32 step and 64-row wgmma, for the stage starts stage_start gives.
TEST(ImplicitGemm, WgmmaDescriptorsReadTheStagesAsTheCopiesWroteThem) {
  for (int t = 0; t < kTileCount; ++t) {
    const TileConfig c = tile_config(t);
    if (c.wgmma_n == 0) continue;
    for (const uint32_t shared : {0u, 16u, 1008u}) {  // where a block's dynamic shared memory may start
      const uint32_t a = stage_start(c, shared), b = a + c.stages * c.a_stage_bytes();
      ASSERT_EQ(a % kWgmmaStageAlignment, 0u) << c.name;
      ASSERT_LE(b + c.stages * c.b_stage_bytes(), shared + c.pipeline_bytes()) << c.name;
      for (int stage = 0; stage < c.stages; ++stage)
        for (int s = 0; s < c.bk / kMmaK; ++s)
          for (int g = 0; g < c.warps() / kWarpgroupWarps; ++g) {
            const uint32_t a_stage = a + stage * c.a_stage_bytes(), b_stage = b + stage * c.b_stage_bytes();
            for (int mi = 0; mi < c.fragment_rows(); ++mi)
              for (int row = 0; row < kWgmmaM; ++row)
                for (int k = 0; k < kMmaK; ++k) {
                  const int tile_row = warpgroup_a_row(c, g, mi) + row;
                  const uint64_t d = wgmma_descriptor(a_stage + warpgroup_a_row(c, g, mi) * c.bk + s * kMmaK);
                  ASSERT_EQ(ptx::wgmma_operand_address(d, row, k),
                            int(a_stage) + tile_offset(tile_row, s * kMmaK + k, c.bk))
                      << c.name << " A: warpgroup " << g << ", wgmma " << mi << ", row " << row << ", k " << k;
                }
            for (int row = 0; row < c.wgmma_n; ++row)
              for (int k = 0; k < kMmaK; ++k) {
                const int tile_row = warpgroup_b_row(c, g) + row;
                const uint64_t d = wgmma_descriptor(b_stage + warpgroup_b_row(c, g) * c.bk + s * kMmaK);
                ASSERT_EQ(ptx::wgmma_operand_address(d, row, k),
                          int(b_stage) + tile_offset(tile_row, s * kMmaK + k, c.bk))
                    << c.name << " B: warpgroup " << g << ", row " << row << ", k " << k;
              }
          }
    }
  }
}

TEST(ImplicitGemm, SwizzleIsABijectionThatKeepsChunksWhole) {
  for (int bk : {64, 128}) {
    const int rows = 128;
    std::vector<bool> seen(size_t(rows) * bk, false);
    for (int row = 0; row < rows; ++row)
      for (int k = 0; k < bk; ++k) {
        const int at = tile_offset(row, k, bk);
        ASSERT_TRUE(at >= 0 && at < rows * bk);
        EXPECT_FALSE(seen[at]) << "row " << row << " k " << k;
        seen[at] = true;
        EXPECT_EQ(at % 16, k % 16) << "a 16-byte chunk is split";
      }
  }
}

TEST(ImplicitGemm, TapCursorMovesLikeDividing) {
  for (const Conv& v : kConvs) {
    const Problem p = problem_of(v);
    for (int step : {64, 128})
      for (int k0 = 0; k0 < 64; k0 += p.access()) {
        TapCursor t = tap_cursor(p, k0);
        for (int k = k0; k < p.depth(); k += step) {
          const TapCursor want = tap_cursor(p, k);
          ASSERT_EQ(t.k, want.k);
          ASSERT_EQ(t.ky, want.ky) << conv_name(v) << " k " << k;
          ASSERT_EQ(t.kx, want.kx) << conv_name(v) << " k " << k;
          ASSERT_EQ(t.c, want.c) << conv_name(v) << " k " << k;
          ASSERT_EQ(t.offset, want.offset) << conv_name(v) << " k " << k;
          advance(t, p, step);
        }
      }
  }
}

// Every A byte the loader can produce is the im2col matrix's byte.
TEST(ImplicitGemm, ActivationOffsetsAndPaddingMasksMatchIm2col) {
  for (const Conv& v : kConvs) {
    // A folded input's bytes are the folded conv's im2col: the kernel tests check its products.
    if (v.fold != ImageFold::kNone) continue;
    const Problem p = problem_of(v);
    const Data d = make_data(v, p, false, false, 5);
    for (int m = 0; m < p.rows() + 3; ++m) {
      const RowOrigin r = row_origin(p, m);
      for (int k = 0; k < p.packed_depth() + 64; k += p.access()) {
        const TapCursor t = tap_cursor(p, k);
        const int at = a_inside(p, r, t) ? a_offset(r, t) : -1;
        for (int b = 0; b < p.access(); ++b) {
          const int kk = k + b, tap = kk / p.tap_c, c = kk % p.tap_c, ky = tap / v.kernel, kx = tap % v.kernel;
          const int ox = m % p.out_w, oy = m / p.out_w % p.out_h, n = m / (p.out_w * p.out_h);
          const int iy = oy * v.stride - v.padding + ky, ix = ox * v.stride - v.padding + kx;
          const bool inside = m < p.rows() && kk < p.depth() && iy >= 0 && iy < v.h && ix >= 0 && ix < v.w;
          const int8_t want = inside && c < v.c ? d.input[((size_t(n) * v.h + iy) * v.w + ix) * v.c + c] : int8_t{0};
          const int8_t got = at < 0 ? int8_t{0} : d.device_input.at(size_t(at + b));
          // Padding channels (c >= v.c) hold garbage on purpose: their weights are zero.
          if (c < v.c || at < 0) {
            ASSERT_EQ(int(got), int(want)) << conv_name(v) << " m " << m << " k " << kk;
          }
        }
      }
    }
  }
}

TEST(ImplicitGemm, TapChannelsReadWordsOnlyWhenThatHalvesK) {
  EXPECT_EQ(tap_channels(1), 4);
  EXPECT_EQ(tap_channels(3), 4);
  EXPECT_EQ(tap_channels(6), 8);
  EXPECT_EQ(tap_channels(8), 8);
  EXPECT_EQ(tap_channels(9), 16);
  EXPECT_EQ(tap_channels(16), 16);
  EXPECT_EQ(tap_channels(20), 32);
  EXPECT_EQ(tap_channels(64), 64);
}

TEST(ImplicitGemm, UnsupportedSaysWhy) {
  Problem p = problem_of({2, 8, 8, 64, 64, 3, 1, 1});
  const int vector_tile = tile_index("m64n64k64"), word_tile = tile_index("m64n64k64w");
  EXPECT_EQ(unsupported(p, vector_tile), "");
  EXPECT_NE(unsupported(p, word_tile).find("needs 16-byte ones"), std::string::npos) << unsupported(p, word_tile);
  Problem first = problem_of({2, 8, 8, 3, 64, 3, 1, 1});
  EXPECT_NE(unsupported(first, vector_tile).find("needs 4-byte ones"), std::string::npos);
  p.in_stride = 8;
  EXPECT_NE(unsupported(p, vector_tile).find("input channels 8"), std::string::npos) << unsupported(p, vector_tile);
  p = problem_of({2, 8, 8, 64, 64, 3, 1, 1});
  p.out_c = 40;
  EXPECT_NE(unsupported(p, vector_tile).find("output channels 40"), std::string::npos);
  p = problem_of({2, 8, 8, 64, 64, 3, 1, 1});
  p.batch = 1 << 20;
  EXPECT_NE(unsupported(p, vector_tile).find("32-bit indexing"), std::string::npos) << unsupported(p, vector_tile);
  // 2147479552 bytes of input fit 32 bits; a row's origin offset reaches past
  // them by the padding (row_origin), which must fit as well.
  p = problem_of({524287, 8, 8, 64, 64, 3, 1, 1});
  EXPECT_EQ(unsupported(p, vector_tile), "");
  p.padding = 8;
  EXPECT_NE(unsupported(p, vector_tile).find("the input"), std::string::npos) << unsupported(p, vector_tile);
  EXPECT_NE(unsupported(p, kTileCount).find("no tile configuration"), std::string::npos);
}

// The cost model picks big tiles for big layers and sliced K for batch 1's
// long-K layers; a tile that fits no multiprocessor is never picked. The
// mma.sync tiles alone (as on a device without wgmma), then with them.
TEST(ImplicitGemm, ChooseTileFollowsTheShape) {
  std::vector<int> resident(kTileCount, 2);
  for (int t = 0; t < kTileCount; ++t)
    if (tile_config(t).wgmma_n > 0) resident[t] = 0;
  const int sms = 132;
  const int big = choose_tile(problem_of({256, 32, 32, 64, 64, 3, 1, 1}), resident.data(), sms);
  ASSERT_GE(big, 0);
  EXPECT_GE(tile_config(big).bm, 64) << tile_config(big).name;
  EXPECT_EQ(tile_config(big).warps_k, 1) << tile_config(big).name;
  const int wide = choose_tile(problem_of({256, 4, 4, 512, 512, 3, 1, 1}), resident.data(), sms);
  ASSERT_GE(wide, 0);
  const int narrow = choose_tile(problem_of({256, 32, 32, 16, 16, 3, 1, 1}), resident.data(), sms);
  ASSERT_GE(narrow, 0);
  EXPECT_EQ(tile_config(narrow).bn, 16) << tile_config(narrow).name;
  const int latency = choose_tile(problem_of({1, 4, 4, 512, 512, 3, 1, 1}), resident.data(), sms);
  ASSERT_GE(latency, 0);
  EXPECT_GT(tile_config(latency).warps_k, 1) << tile_config(latency).name;
  const int first = choose_tile(problem_of({256, 32, 32, 3, 64, 3, 1, 1}), resident.data(), sms);
  ASSERT_GE(first, 0);
  EXPECT_EQ(tile_config(first).access, kWordBytes);
  std::vector<int> none_fit(kTileCount, 0);
  EXPECT_EQ(choose_tile(problem_of({256, 32, 32, 64, 64, 3, 1, 1}), none_fit.data(), sms), -1);
  // wgmma's rate is twice mma.sync's: the model puts a wgmma tile first for a big layer.
  const std::vector<int> all(kTileCount, 2);
  const int hopper = choose_tile(problem_of({256, 16, 16, 128, 128, 3, 1, 1}), all.data(), sms);
  ASSERT_GE(hopper, 0);
  EXPECT_GT(tile_config(hopper).wgmma_n, 0) << tile_config(hopper).name;
}

// Split K (SplitK): ResNet-18's last stage at batch 1 (8 output tiles of
// m16n64k128s4, 36 K tiles) splits 12 ways, 3 K tiles each, on 132
// multiprocessors, not at batch 256 (2,048 tiles), nor a K of one tile; its
// buffers hold a slice's registers per tile, within the engine's bound. Every K range covers the K tiles
// once, in order, none empty. With split K the cost model's pick for batch 1
// is a split one, and each tile that splits is a candidate whole too (only
// timing tells which is faster); without, none is split.
TEST(ImplicitGemm, SplitKSpreadsLongKOverIdleMultiprocessors) {
  const int s4 = tile_index("m16n64k128s4");
  const Problem batch1 = problem_of({1, 4, 4, 512, 512, 3, 1, 1});
  EXPECT_EQ(split_slices(batch1, s4, 132), 12);
  EXPECT_EQ(split_slices(problem_of({256, 4, 4, 512, 512, 3, 1, 1}), s4, 132), 1);
  EXPECT_EQ(split_slices(problem_of({1, 4, 4, 64, 64, 1, 1, 0}), s4, 132), 1);
  EXPECT_EQ(split_partial_bytes(batch1, s4, 12), int64_t(8) * 12 * 16 * 64 * 4 * 4);  // 4 K-slice warps' sums
  EXPECT_EQ(split_partial_bytes(batch1, s4, 1), 0);
  EXPECT_EQ(split_arrival_bytes(batch1, s4), 8 * 4);
  EXPECT_EQ(launch_name({s4, 12}), "m16n64k128s4 K/12");
  EXPECT_EQ(launch_name({s4, 1}), "m16n64k128s4");
  for (int k_tiles = 1; k_tiles <= 80; ++k_tiles)
    for (int wanted = 1; wanted <= kMaxSlices; ++wanted) {
      const int slices = ceil_div(k_tiles, ceil_div(k_tiles, wanted));
      int next = 0;
      for (int slice = 0; slice < slices; ++slice) {
        const KRange r = k_range(k_tiles, slices, slice);
        ASSERT_EQ(r.first, next) << k_tiles << " K tiles in " << slices << ", slice " << slice;
        ASSERT_GT(r.count, 0) << k_tiles << " K tiles in " << slices << ", slice " << slice;
        next += r.count;
      }
      ASSERT_EQ(next, k_tiles) << k_tiles << " K tiles in " << slices;
    }
  // The engine's buffers, made once at the most any conv needs, hold every split.
  for (const int sms : {108, 132})
    for (const int batch : {1, 2, 3, 8})
      for (const int size : {1, 2, 4, 7, 8, 16})
        for (const int c : {16, 64, 256, 512})
          for (const int out_c : {16, 48, 256, 512})
            for (int t = 0; t < kTileCount; ++t) {
              const Problem p = problem_of({batch, size, size, c, out_c, 3, 1, 1});
              const int slices = split_slices(p, t, sms);
              if (slices == 1) continue;
              ASSERT_LE(split_partial_bytes(p, t, slices), split_partial_bytes_at_most(sms)) << slices;
              ASSERT_LE(split_arrival_bytes(p, t), split_arrival_bytes_at_most(sms)) << slices;
            }
  std::vector<int> resident(kTileCount, 2);
  for (int t = 0; t < kTileCount; ++t)
    if (tile_config(t).wgmma_n > 0) resident[t] = 0;
  const std::vector<TileLaunch> candidates = tile_candidates(batch1, resident.data(), 132, true);
  ASSERT_FALSE(candidates.empty());
  EXPECT_GT(candidates.front().slices, 1) << launch_name(candidates.front());
  size_t runnable = 0, split = 0;
  for (int t = 0; t < kTileCount; ++t) {
    if (resident[size_t(t)] == 0 || !unsupported(batch1, t).empty()) continue;
    const int slices = split_slices(batch1, t, 132);
    const auto offered = [&](int s) { return std::count(candidates.begin(), candidates.end(), TileLaunch{t, s}); };
    EXPECT_EQ(offered(1), 1) << tile_config(t).name << " whole";
    ++runnable;
    if (slices == 1) continue;
    EXPECT_EQ(offered(slices), 1) << tile_config(t).name << " split";
    ++split;
  }
  EXPECT_EQ(candidates.size(), runnable + split);
  EXPECT_EQ(split, 3u) << "the tiles of at most 64 rows reading 16 bytes split layer4 at batch 1";
  for (const TileLaunch& c : tile_candidates(batch1, resident.data(), 132)) EXPECT_EQ(c.slices, 1) << c.tile;
}

TEST(ImplicitGemm, EnvironmentForcesATile) {
  const Problem p = problem_of({8, 16, 16, 64, 64, 3, 1, 1});
  const std::vector<int> resident(kTileCount, 2);
  ::setenv("OCTET_IMMA_TILE", "m64n64k64", 1);
  EXPECT_EQ(choose_tile(p, resident.data(), 132), tile_index("m64n64k64"));
  ::setenv("OCTET_IMMA_TILE", "m64n64k64w", 1);
  EXPECT_EQ(choose_tile(p, resident.data(), 132), -1) << "a tile that cannot run the layer";
  ::setenv("OCTET_IMMA_TILE", "nonsense", 1);
  EXPECT_NE(error_of([&] { choose_tile(p, resident.data(), 132); }).find("unknown tile 'nonsense'"), std::string::npos);
  ::unsetenv("OCTET_IMMA_TILE");
}

}  // namespace
}  // namespace octet::cuda::igemm
