#include "runtime/cuda/implicit_gemm.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "common/error.h"

namespace octet::cuda::igemm {

namespace {

// Cost-model constants (cycles), rough figures for sm_80/sm_90 to be
// refined with `octet bench infer --layers` on a GPU: one mma.m16n8k32 per
// sub-partition, the shortest a pipeline stage takes however little it
// computes, and a block's prologue and epilogue.
constexpr double kMmaCycles = 8, kStageFloorCycles = 120, kBlockOverheadCycles = 1500;
// A wgmma's share per m16n8k32 it holds: Hopper's dense int8 rate, twice mma.sync's.
constexpr double kWgmmaCycles = kMmaCycles / 2;
constexpr int kSubPartitions = 4;

std::string text(int64_t v) { return std::to_string(v); }

}  // namespace

std::string tile_invalid(const TileConfig& t) {
  if (t.access != kVectorBytes && t.access != kWordBytes) return "access must be 16 or 4 bytes";
  if (t.bk % 64 != 0) return "bk must be a multiple of 64 (the swizzle period of 16 rows)";
  if (t.bm % t.warps_m != 0 || t.wm() % kMmaM != 0) return "bm / warps_m must be a multiple of 16";
  if (t.bn % t.warps_n != 0 || t.wn() % 16 != 0) return "bn / warps_n must be a multiple of 16 (B loads 2 n8 blocks)";
  if ((t.bk / kMmaK) % t.warps_k != 0) return "the K steps of a stage must divide among the K slices";
  if (t.threads() % (t.bk / t.access) != 0 || t.threads() % (t.bk / kVectorBytes) != 0)
    return "threads must be a multiple of the copies per row (each thread keeps one k)";
  if (t.threads() % (t.bn / 4) != 0 || t.bm % (t.threads() / (t.bn / 4)) != 0)
    return "the epilogue's rows per pass must divide bm";
  if (t.stages < 2) return "the pipeline needs at least 2 stages";
  if (t.wgmma_n == 0) return "";
  if (t.bk != 128) return "a wgmma tile's stages hold 128 bytes of K (the rows of the 128-byte swizzle)";
  if (t.warps_k != 1) return "a wgmma tile does not slice K";
  if (t.lookahead() < 1) return "a wgmma tile needs a stage beyond those its wgmmas in flight read";
  if (t.warps_m % kWarpgroupWarps != 0 || t.warpgroup_rows() % kWgmmaM != 0)
    return "a wgmma tile's warps along M must be whole warpgroups of 64-row multiples";
  if (t.wgmma_n != t.wn() || t.wgmma_n > 256) return "wgmma_n must be bn / warps_n, at most 256";
  return "";
}

std::string unsupported(const Problem& p, int tile) {
  if (tile < 0 || tile >= kTileCount) return "no tile configuration " + text(tile);
  const TileConfig t = tile_config(tile);
  if (p.batch <= 0 || p.in_h <= 0 || p.in_w <= 0 || p.out_h <= 0 || p.out_w <= 0 || p.kernel <= 0 || p.stride <= 0 ||
      p.padding < 0)
    return "empty or malformed shape";
  if (p.in_stride <= 0 || p.in_stride % kChannelAlignment != 0)
    return "stored input channels " + text(p.in_stride) + " are not a positive multiple of 16";
  if (p.out_c <= 0 || p.out_c % kChannelAlignment != 0)
    return "stored output channels " + text(p.out_c) + " are not a positive multiple of 16";
  if (p.tap_c <= 0 || p.tap_c % kWordBytes != 0 || p.tap_c > p.in_stride)
    return "channels per tap " + text(p.tap_c) + " are not a positive multiple of 4 within the stored " +
           text(p.in_stride);
  if (t.access != p.access())
    return std::string(t.name) + " copies " + text(t.access) + "-byte pieces, this layer needs " + text(p.access()) +
           "-byte ones (" + text(p.tap_c) + " channels per tap)";
  const int64_t in_bytes = int64_t(p.batch) * p.in_h * p.in_w * p.in_stride;
  const int64_t rows = int64_t(p.batch) * p.out_h * p.out_w;
  const int64_t depth = int64_t(p.kernel) * p.kernel * p.tap_c;
  // A row's origin offset may reach past the input by the padding (row_origin).
  const int64_t in_reach = in_bytes + int64_t(p.padding) * (p.in_w + 1) * p.in_stride;
  if (in_reach >= INT_MAX) return "the input (" + text(in_bytes) + " bytes) exceeds 32-bit indexing";
  if (rows * p.out_c >= INT_MAX) return "the output (" + text(rows * p.out_c) + " bytes) exceeds 32-bit indexing";
  if (int64_t(p.out_c) * (depth + kDepthMultiple) >= INT_MAX)
    return "the weights (K = " + text(depth) + ") exceed 32-bit indexing";
  if (ceil_div(p.out_c, t.bn) > 65535) return "too many output channels for the grid";
  return "";
}

int output_tiles(const Problem& p, int tile) {
  const TileConfig t = tile_config(tile);
  return ceil_div(p.rows(), t.bm) * ceil_div(p.out_c, t.bn);
}

int split_slices(const Problem& p, int tile, int multiprocessors) {
  const int blocks = output_tiles(p, tile), k_tiles = ceil_div(p.packed_depth(), tile_config(tile).bk);
  if (!tile_config(tile).splits_k() || 2 * blocks > multiprocessors) return 1;
  const int wanted = std::min({ceil_div(multiprocessors, blocks), k_tiles / kMinSliceTiles, kMaxSlices});
  return wanted < 2 ? 1 : ceil_div(k_tiles, ceil_div(k_tiles, wanted));
}

int64_t split_partial_bytes(const Problem& p, int tile, int slices) {
  const TileConfig t = tile_config(tile);
  const int64_t registers = int64_t(t.threads()) * t.fragment_rows() * t.fragment_cols() * 4;
  return slices > 1 ? int64_t(output_tiles(p, tile)) * slices * registers * int64_t(sizeof(int32_t)) : 0;
}

int64_t split_arrival_bytes(const Problem& p, int tile) { return int64_t(output_tiles(p, tile)) * sizeof(uint32_t); }

int64_t split_partial_bytes_at_most(int multiprocessors) {
  int64_t block_bytes = 0;  // a block's registers, the largest of the splitting tiles'
  for (int i = 0; i < kTileCount; ++i) {
    const TileConfig t = tile_config(i);
    if (t.splits_k())
      block_bytes = std::max(block_bytes, int64_t(t.threads()) * t.fragment_rows() * t.fragment_cols() * 4 * 4);
  }
  // blocks <= multiprocessors / 2 tiles x slices <= ceil(multiprocessors / tiles): below 1.5 x multiprocessors.
  return (multiprocessors + multiprocessors / 2) * block_bytes;
}

int64_t split_arrival_bytes_at_most(int multiprocessors) { return multiprocessors / 2 * int64_t(sizeof(uint32_t)); }

std::string launch_name(const TileLaunch& launch) {
  return std::string(tile_config(launch.tile).name) + (launch.slices > 1 ? " K/" + std::to_string(launch.slices) : "");
}

int tile_index(const std::string& name) {
  for (int i = 0; i < kTileCount; ++i)
    if (name == tile_config(i).name) return i;
  return -1;
}

namespace {

// The cost model's cycles for `launch` on `p`, with `resident` of its blocks on each multiprocessor.
double modelled_cycles(const Problem& p, const TileLaunch& launch, int resident, int multiprocessors) {
  const TileConfig t = tile_config(launch.tile);
  const int64_t blocks = int64_t(output_tiles(p, launch.tile)) * launch.slices;
  const int64_t slots = int64_t(multiprocessors) * resident;
  const int64_t waves = (blocks + slots - 1) / slots;
  const int64_t per_sm = (std::min(blocks, slots) + multiprocessors - 1) / multiprocessors;
  const double mma_per_stage =
      double(per_sm) * t.warps() * t.steps_per_warp() * t.fragment_rows() * t.fragment_cols() / kSubPartitions;
  const double stage_cycles = std::max(kStageFloorCycles, mma_per_stage * (t.wgmma_n ? kWgmmaCycles : kMmaCycles));
  const int k_stages = ceil_div(ceil_div(p.packed_depth(), t.bk), launch.slices);
  const double overhead = kBlockOverheadCycles * (launch.slices > 1 ? 2 : 1);  // a split's sums out and back in
  return double(waves) * (k_stages * stage_cycles + overhead);
}

}  // namespace

std::vector<TileLaunch> tile_candidates(const Problem& p, const int* resident, int multiprocessors, bool split_k) {
  const auto slices_of = [&](int tile) { return split_k ? split_slices(p, tile, multiprocessors) : 1; };
  if (const char* forced = std::getenv("OCTET_IMMA_TILE"); forced && *forced) {
    const int i = tile_index(forced);
    check(i >= 0, std::string("environment variable OCTET_IMMA_TILE: unknown tile '") + forced + "'");
    if (unsupported(p, i).empty() && resident[i] > 0) return {{i, slices_of(i)}};
    return {};
  }
  std::vector<std::pair<double, TileLaunch>> modelled;
  for (int i = 0; i < kTileCount; ++i) {
    if (resident[i] <= 0 || !unsupported(p, i).empty()) continue;
    const auto add = [&](int slices) {
      modelled.push_back({modelled_cycles(p, {i, slices}, resident[i], multiprocessors), {i, slices}});
    };
    add(1);
    if (const int slices = slices_of(i); slices > 1) add(slices);
  }
  std::stable_sort(modelled.begin(), modelled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TileLaunch> out;
  for (const auto& [cycles, launch] : modelled) out.push_back(launch);
  return out;
}

int choose_tile(const Problem& p, const int* resident, int multiprocessors, bool split_k) {
  const std::vector<TileLaunch> candidates = tile_candidates(p, resident, multiprocessors, split_k);
  return candidates.empty() ? -1 : candidates.front().tile;
}

}  // namespace octet::cuda::igemm
