// The index math of the cuda-imma convolution (conv2d_imma.cu) as plain
// host+device functions: the kernel calls them for every address it forms,
// and tests/cuda/test_implicit_gemm.cpp calls the same functions in a CPU
// emulation of a thread block, so the logic is checked without a GPU.
//
// The convolution is an implicit GEMM, out[M][N] = A[M][K] x B[N][K]^T:
//   M = batch x out_h x out_w output pixels (the GEMM rows),
//   N = output channels (stored: a multiple of 16),
//   K = kernel x kernel taps x tap_c channels (tap-major, (ky, kx, c) order),
//       packed with zeros to a multiple of 32.
// A is never materialised: its row m, bytes k..k+access-1, are read straight
// from the NHWC input (zeros outside the image). B is the weights packed once
// at load, [N][packed K]. Each thread block computes a BM x BN tile of the
// output; K advances BK bytes per pipeline stage (cp.async), each warp
// computes a WM x WN sub-tile with mma.sync.m16n8k32 (s8 x s8 -> s32) on
// fragments loaded by ldmatrix, and optionally only some of the 32-byte K
// steps of each stage ("sliced K": the warps' partial sums are added in the
// epilogue). The epilogue stages the accumulators in shared memory and writes
// 4 channels per thread through common/requantize.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/requantize.h"  // OCTET_HOST_DEVICE

namespace octet::cuda::igemm {

// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 32;
constexpr int kWarpSize = 32;
// Activations of cuda-imma: NHWC int8, channels padded with zeros to a multiple of this.
constexpr int kChannelAlignment = 16;
// Packed weights: K padded with zeros to a multiple of this.
constexpr int kDepthMultiple = kMmaK;
// Bytes per cp.async copy of the A (activation) tile: 16 (a channel vector)
// when tap_c is a multiple of 16, else 4 (a word of 4 channels).
constexpr int kVectorBytes = 16, kWordBytes = 4;
// Extra int32 per row of the accumulator staging tile: rows 32 bytes apart
// in the banks, so the 8-byte fragment stores of a half-warp do not collide.
constexpr int kStagingPad = 8;

OCTET_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
OCTET_HOST_DEVICE constexpr int round_up(int a, int b) { return ceil_div(a, b) * b; }

// One convolution as the kernel sees it. 32-bit indexing throughout:
// unsupported() refuses shapes whose tensors do not fit it.
struct Problem {
  int batch = 0;
  int in_h = 0, in_w = 0, in_stride = 0;  // in_stride: stored input channels (a multiple of 16)
  int tap_c = 0;                          // channels per tap in K (>= the real ones, a multiple of 4)
  int out_h = 0, out_w = 0, out_c = 0;    // out_c: stored output channels (a multiple of 16)
  int kernel = 1, stride = 1, padding = 0;
  OCTET_HOST_DEVICE int rows() const { return batch * out_h * out_w; }
  OCTET_HOST_DEVICE int taps() const { return kernel * kernel; }
  OCTET_HOST_DEVICE int depth() const { return taps() * tap_c; }                            // K with data
  OCTET_HOST_DEVICE int packed_depth() const { return round_up(depth(), kDepthMultiple); }  // K of B
  OCTET_HOST_DEVICE int access() const { return tap_c % kVectorBytes == 0 ? kVectorBytes : kWordBytes; }
};

// The channels per tap cuda-imma reads for an input of `channels` real
// channels: all 16-aligned stored ones, unless padding to 4 at least halves
// K (a first layer of 3 channels: K = 9 x 4 instead of 9 x 16), then read as
// 4-byte words.
inline int tap_channels(int channels) {
  const int words = round_up(channels, kWordBytes), vectors = round_up(channels, kVectorBytes);
  return 2 * words <= vectors ? words : vectors;
}

// A convolution over `channels` real input channels and `out_c` output ones,
// as cuda-imma stores its tensors (channels padded to 16) and reads its input
// (tap_channels).
inline Problem conv_problem(int batch, int h, int w, int channels, int out_c, int kernel, int stride, int padding) {
  Problem p;
  p.batch = batch, p.in_h = h, p.in_w = w, p.in_stride = round_up(channels, kChannelAlignment);
  p.tap_c = tap_channels(channels);
  p.out_h = (h + 2 * padding - kernel) / stride + 1, p.out_w = (w + 2 * padding - kernel) / stride + 1;
  p.out_c = round_up(out_c, kChannelAlignment);
  p.kernel = kernel, p.stride = stride, p.padding = padding;
  return p;
}

// wgmma.mma_async.m64nNk32: a warpgroup of 4 warps computes 64 rows, each
// warp 16 of them; its operands are read from shared memory through
// descriptors (wgmma_descriptor).
constexpr int kWarpgroupWarps = 4, kWgmmaM = 64;
// A wgmma tile's stages start on this many bytes: the period of the 128-byte
// swizzle, which the tensor cores apply to shared-memory addresses.
constexpr int kWgmmaStageAlignment = 1024;
// The K tiles whose wgmmas may still run while a warpgroup goes on to copy
// and multiply the next: their stages are not refilled until waited for.
constexpr int kWgmmaInFlight = 1;

// A thread-block tile shape and its pipeline.
struct TileConfig {
  const char* name;
  int bm, bn, bk;                 // block tile (K bytes per stage)
  int warps_m, warps_n, warps_k;  // warps along M, N and K slices
  int stages;                     // cp.async pipeline depth
  int access;                     // bytes per A copy: kVectorBytes or kWordBytes
  // 0: each warp multiplies with mma.sync. Else N of the wgmma (sm_90a) each
  // warpgroup issues: warps_m / 4 warpgroups along M, warps_n along N.
  int wgmma_n = 0;
  OCTET_HOST_DEVICE constexpr int warps() const { return warps_m * warps_n * warps_k; }
  OCTET_HOST_DEVICE constexpr int threads() const { return kWarpSize * warps(); }
  OCTET_HOST_DEVICE constexpr int wm() const { return bm / warps_m; }  // warp tile (mma.sync)
  OCTET_HOST_DEVICE constexpr int wn() const { return bn / warps_n; }
  OCTET_HOST_DEVICE constexpr int steps_per_warp() const { return bk / kMmaK / warps_k; }
  // The K tiles copied ahead of the one multiplied: the stages less that one
  // and those the wgmmas in flight still read.
  OCTET_HOST_DEVICE constexpr int lookahead() const { return stages - 1 - (wgmma_n ? kWgmmaInFlight : 0); }
  // A warpgroup's rows (wgmma).
  OCTET_HOST_DEVICE constexpr int warpgroup_rows() const { return bm / (warps_m / kWarpgroupWarps); }
  // A warp's accumulators: fragment_rows() x fragment_cols() m16n8 blocks
  // (for wgmma: one row of blocks per wgmma along M, its N / 8 columns).
  OCTET_HOST_DEVICE constexpr int fragment_rows() const {
    return wgmma_n ? warpgroup_rows() / kWgmmaM : wm() / kMmaM;
  }
  OCTET_HOST_DEVICE constexpr int fragment_cols() const { return wn() / kMmaN; }
  // Whether its kernel may split K (SplitK): the mma.sync tiles of at most 64
  // rows, which the layers of few output pixels take; the others keep their
  // registers (the split's code costs the largest tiles 20-40 more).
  OCTET_HOST_DEVICE constexpr bool splits_k() const { return wgmma_n == 0 && bm <= 64; }
  OCTET_HOST_DEVICE constexpr int a_stage_bytes() const { return bm * bk; }
  OCTET_HOST_DEVICE constexpr int b_stage_bytes() const { return bn * bk; }
  // The stages, and room to move their start to kWgmmaStageAlignment.
  OCTET_HOST_DEVICE constexpr int pipeline_bytes() const {
    return stages * (a_stage_bytes() + b_stage_bytes()) + (wgmma_n ? kWgmmaStageAlignment : 0);
  }
  OCTET_HOST_DEVICE constexpr int staging_bytes() const {
    return warps_k * bm * (bn + kStagingPad) * int(sizeof(int32_t));
  }
  OCTET_HOST_DEVICE constexpr int shared_bytes() const {
    return pipeline_bytes() > staging_bytes() ? pipeline_bytes() : staging_bytes();
  }
};

// The tile configurations the kernel is compiled for. Large tiles for many
// output pixels (4 warps, or 8 ("x8") for more warps per multiprocessor;
// 128-byte K stages halve the barriers of long-K layers), narrow ones for 16
// and 32 channels, sliced K for few pixels and long K (batch 1, the last
// stages), word loads for first layers; on sm_90 ("g") two warpgroups
// multiplying with wgmma, Hopper's full int8 rate (mma.sync reaches about
// half of it). The engine times the candidates of each layer shape
// (tile_tuner.h), so a configuration only has to win somewhere.
constexpr int kTileCount = 17;
OCTET_HOST_DEVICE constexpr TileConfig tile_config(int index) {
  constexpr TileConfig tiles[kTileCount] = {
      {"m128n128k64", 128, 128, 64, 2, 2, 1, 4, kVectorBytes},
      {"m128n64k64", 128, 64, 64, 2, 2, 1, 4, kVectorBytes},
      {"m128n32k64", 128, 32, 64, 4, 1, 1, 4, kVectorBytes},
      {"m128n16k64", 128, 16, 64, 4, 1, 1, 4, kVectorBytes},
      {"m64n64k64", 64, 64, 64, 2, 2, 1, 4, kVectorBytes},
      {"m32n64k128s2", 32, 64, 128, 1, 2, 2, 3, kVectorBytes},
      {"m16n64k128s4", 16, 64, 128, 1, 2, 4, 3, kVectorBytes},
      {"m64n64k64w", 64, 64, 64, 2, 2, 1, 4, kWordBytes},
      {"m128n16k64w", 128, 16, 64, 4, 1, 1, 4, kWordBytes},
      {"m128n128k128", 128, 128, 128, 2, 2, 1, 3, kVectorBytes},
      {"m128n64k128", 128, 64, 128, 2, 2, 1, 3, kVectorBytes},
      {"m128n128k64x8", 128, 128, 64, 4, 2, 1, 4, kVectorBytes},
      {"m128n64k128g", 128, 64, 128, 8, 1, 1, 4, kVectorBytes, 64},
      {"m256n64k128g", 256, 64, 128, 8, 1, 1, 4, kVectorBytes, 64},
      {"m128n128k128g", 128, 128, 128, 8, 1, 1, 4, kVectorBytes, 128},
      {"m256n128k128g", 256, 128, 128, 8, 1, 1, 4, kVectorBytes, 128},
      {"m128n256k128g", 128, 256, 128, 8, 1, 1, 4, kVectorBytes, 256},
  };
  return tiles[index];
}

// ---------------------------------------------------------------- shared memory
// A stage holds the A tile (BM rows) and the B tile (BN rows) of BK bytes
// each, row-major. The 16-byte chunks of every 128-byte line are XOR-swizzled
// with the line's index (bits 4-6 ^= bits 7-9), so the 8 rows an ldmatrix
// phase reads, and the 8 chunks a cp.async phase writes, fall in 8 different
// groups of 4 banks.
OCTET_HOST_DEVICE int swizzle(int offset) { return offset ^ (((offset >> 7) & 7) << 4); }
OCTET_HOST_DEVICE int tile_offset(int row, int k, int bk) { return swizzle(row * bk + k); }

// The first stage's shared-state-space address in a block's dynamic shared
// memory at `shared`: moved to kWgmmaStageAlignment for wgmma
// (pipeline_bytes has room for it).
OCTET_HOST_DEVICE constexpr uint32_t stage_start(const TileConfig& c, uint32_t shared) {
  return c.wgmma_n ? (shared + kWgmmaStageAlignment - 1) & ~uint32_t(kWgmmaStageAlignment - 1) : shared;
}

// ---------------------------------------------------------------- global -> shared copies
// A tile of `rows` x bk bytes is copied in `access`-byte pieces; piece
// index = thread + i * threads of the block is row index / (bk / access),
// bytes (index % (bk / access)) * access. With threads a multiple of
// bk / access (tile_is_valid), a thread's k is the same in every piece.
struct CopySlot {
  int row, k;
};
OCTET_HOST_DEVICE CopySlot copy_slot(int thread, int i, int threads, int bk, int access) {
  const int per_row = bk / access, index = thread + i * threads;
  return {index / per_row, (index % per_row) * access};
}
OCTET_HOST_DEVICE constexpr int copies_per_thread(int rows, int bk, int access, int threads) {
  return ceil_div(rows * (bk / access), threads);
}

// An output pixel m as the A loader needs it: the input pixel of its
// window's top-left tap (y, x) and that pixel's offset in the input (which
// lies outside it where y or x is negative). Past the last row y is far above
// the image, so that every tap falls outside.
struct RowOrigin {
  int offset, y, x;
};
constexpr int kOutsideRow = -(1 << 30);
OCTET_HOST_DEVICE RowOrigin row_origin(const Problem& p, int m) {
  if (m >= p.rows()) return {0, kOutsideRow, 0};
  const int ox = m % p.out_w, oy = (m / p.out_w) % p.out_h, n = m / (p.out_w * p.out_h);
  const int y = oy * p.stride - p.padding, x = ox * p.stride - p.padding;
  return {((n * p.in_h + y) * p.in_w + x) * p.in_stride, y, x};
}

// A position k in K as (tap ky, kx; channel c), and its offset from a row's
// origin pixel. Made once by division, then moved forward stage by stage
// without dividing.
struct TapCursor {
  int k, ky, kx, c, offset;
};
OCTET_HOST_DEVICE int tap_offset(const Problem& p, int ky, int kx, int c) {
  return (ky * p.in_w + kx) * p.in_stride + c;
}
OCTET_HOST_DEVICE TapCursor tap_cursor(const Problem& p, int k) {
  const int tap = k / p.tap_c, ky = tap / p.kernel, kx = tap % p.kernel, c = k % p.tap_c;
  return {k, ky, kx, c, tap_offset(p, ky, kx, c)};
}
OCTET_HOST_DEVICE void advance(TapCursor& t, const Problem& p, int step) {
  t.k += step;
  t.c += step;
  while (t.c >= p.tap_c) {
    t.c -= p.tap_c;
    if (++t.kx == p.kernel) {
      t.kx = 0;
      ++t.ky;
    }
  }
  t.offset = tap_offset(p, t.ky, t.kx, t.c);
}

// Whether A's bytes (m, t.k ..) for m's origin hold data, not zeros (padding,
// past K, past the last row). One unsigned compare per axis tests both of
// its bounds.
OCTET_HOST_DEVICE bool a_inside(const Problem& p, const RowOrigin& r, const TapCursor& t) {
  return t.k < p.depth() && static_cast<unsigned>(r.y + t.ky) < static_cast<unsigned>(p.in_h) &&
         static_cast<unsigned>(r.x + t.kx) < static_cast<unsigned>(p.in_w);
}
// Their offset in the input, where a_inside.
OCTET_HOST_DEVICE int a_offset(const RowOrigin& r, const TapCursor& t) { return r.offset + t.offset; }

// B's 16 bytes (n, k ..) in the packed weights: data where b_inside (else
// zeros), at b_row_start(n) + k.
OCTET_HOST_DEVICE bool b_inside(const Problem& p, int n, int k) { return n < p.out_c && k < p.packed_depth(); }
OCTET_HOST_DEVICE int b_row_start(const Problem& p, int n) { return n * p.packed_depth(); }

// ---------------------------------------------------------------- warps and fragments
// Warp w of the block: its sub-tile (m, n) and its K slice.
struct WarpTile {
  int m, n, k;
};
OCTET_HOST_DEVICE WarpTile warp_tile(int warp, int warps_m, int warps_n) {
  return {warp % warps_m, (warp / warps_m) % warps_n, warp / (warps_m * warps_n)};
}
// The s-th 32-byte K step of a stage that slice `slice` computes.
OCTET_HOST_DEVICE int k_step(int slice, int s, int warps_k) { return slice + s * warps_k; }

// ldmatrix.x4 loads four 8 x 16-byte matrices; lanes 8j..8j+7 give the row
// addresses of matrix j. For A (16 rows x 32 bytes of K) the matrices are
// rows 0-7 / 8-15 of bytes 0-15, then of bytes 16-31: registers a0..a3 of
// mma.m16n8k32. For B two n8 blocks at once: rows (output channels) 0-7
// bytes 0-15 and 16-31 (b0, b1 of the first block), then rows 8-15.
OCTET_HOST_DEVICE int a_fragment_row(int lane) { return lane % 16; }
OCTET_HOST_DEVICE int a_fragment_k(int lane) { return lane / 16 * 16; }
OCTET_HOST_DEVICE int b_fragment_row(int lane) { return lane % 8 + lane / 16 * 8; }
OCTET_HOST_DEVICE int b_fragment_k(int lane) { return lane / 8 % 2 * 16; }
// The shared-memory offset of a lane's ldmatrix row in the 16-row block
// `block` below `row0`: 16 rows are 16 x bk bytes, a multiple of the
// swizzle's 1024-byte period when bk is a multiple of 64, so the block
// adds a constant and the kernel swizzles once per K step.
OCTET_HOST_DEVICE int fragment_offset(int row0, int lane_row, int k, int block, int bk) {
  return tile_offset(row0 + lane_row, k, bk) + block * 16 * bk;
}

// Accumulator register i (0..3) of a lane in an m16n8 tile (PTX ISA: c0, c1
// on row groupID, c2, c3 on groupID + 8; columns 2 x threadID_in_group + i % 2).
// A wgmma's accumulators are such tiles too: warp w of the warpgroup holds
// rows 16w..16w+15, registers 4j..4j+3 the n8 block j.
OCTET_HOST_DEVICE int acc_row(int lane, int i) { return lane / 4 + i / 2 * 8; }
OCTET_HOST_DEVICE int acc_col(int lane, int i) { return lane % 4 * 2 + i % 2; }

// The first row and column in the block tile of a warp's m16n8 accumulator
// block (mi, ni). With wgmma, warp_tile's m is 4 x the warpgroup's row
// position + the warp's rank in it, and block row mi is the mi-th wgmma's.
OCTET_HOST_DEVICE constexpr int fragment_row(const TileConfig& c, const WarpTile& w, int mi) {
  return c.wgmma_n ? w.m / kWarpgroupWarps * c.warpgroup_rows() + mi * kWgmmaM + w.m % kWarpgroupWarps * kMmaM
                   : w.m * c.wm() + mi * kMmaM;
}
OCTET_HOST_DEVICE constexpr int fragment_col(const TileConfig& c, const WarpTile& w, int ni) {
  return w.n * c.wn() + ni * kMmaN;
}

// ---------------------------------------------------------------- wgmma operands
// Where warpgroup g's wgmma mi reads A (its first row) and B (its first
// output channel) in a stage: warpgroups are numbered along M first.
OCTET_HOST_DEVICE constexpr int warpgroup_a_row(const TileConfig& c, int g, int mi) {
  return g % (c.warps_m / kWarpgroupWarps) * c.warpgroup_rows() + mi * kWgmmaM;
}
OCTET_HOST_DEVICE constexpr int warpgroup_b_row(const TileConfig& c, int g) {
  return g / (c.warps_m / kWarpgroupWarps) * c.wgmma_n;
}
// The shared-memory matrix descriptor (PTX ISA, "matrix-descriptor-format")
// of 8-row groups of 128-byte K-major rows, 1,024 bytes apart, in the
// 128-byte swizzle, starting at shared-state-space `address`: the layout of
// a 128-byte-K stage (tile_offset) when the stage starts on 1,024 bytes.
// Moving `address` 32 bytes moves one k32 step along K. Bits 0-13: address
// / 16; 16-29: the leading-dimension offset (unused by K-major swizzled
// operands: 1); 32-45: the 8-row stride / 16; 62-63: 1, the 128-byte swizzle.
OCTET_HOST_DEVICE constexpr uint64_t wgmma_descriptor(uint32_t address) {
  return uint64_t((address & 0x3FFFF) >> 4) | uint64_t(1) << 16 | uint64_t(8 * 128 / 16) << 32 | uint64_t(1) << 62;
}

// ---------------------------------------------------------------- epilogue
// The int32 staging tile: [slice][bm][bn + kStagingPad].
OCTET_HOST_DEVICE int staging_index(int slice, int row, int col, int bm, int bn) {
  return (slice * bm + row) * (bn + kStagingPad) + col;
}
// Each thread requantizes 4 adjacent channels (column 4 x (thread % (bn/4)))
// of rows q + pass x threads / (bn/4), q = thread / (bn/4). With bn = 16 the
// 8 threads of a 16-byte read phase span two rows q, q + 1: staging rows are
// 24 words apart, so those two would share 8 banks. Swapping q's bits 0 and
// 1 reads rows 0 and 2 of each 4 together (48 words apart: no shared bank),
// then 1 and 3; the stores to global memory stay within one warp's rows.
OCTET_HOST_DEVICE int epilogue_col(int thread, int bn) { return thread % (bn / 4) * 4; }
OCTET_HOST_DEVICE int epilogue_row(int thread, int pass, int threads, int bn) {
  int q = thread / (bn / 4);
  if (bn == 16) q = (q & ~3) | (q & 1) << 1 | (q >> 1 & 1);
  return q + pass * (threads / (bn / 4));
}
OCTET_HOST_DEVICE constexpr int epilogue_passes(int bm, int bn, int threads) { return bm / (threads / (bn / 4)); }

// The block's first output pixel and channel (grid x over M, y over N).
struct BlockTile {
  int m0, n0;
};
OCTET_HOST_DEVICE BlockTile block_tile(int block_x, int block_y, int bm, int bn) {
  return {block_x * bm, block_y * bn};
}

// ---------------------------------------------------------------- split K
// K divided among `slices` blocks per output tile (blockIdx.z), for layers of
// few tiles and long K (ResNet-18's last stages at batch 1: 8 blocks of 36 K
// tiles): each block stores its slice's sums in `partials`, and the last of a
// tile's blocks to finish (counted in `arrivals`) adds the others' and runs
// the epilogue, as CUTLASS's serial split-K. int32 sums wrap alike in any
// order: the same bits as one block.
struct SplitK {
  int slices = 1;
  int32_t* partials = nullptr;   // [output tile][slice][accumulator register][thread]
  uint32_t* arrivals = nullptr;  // per output tile: its blocks finished; 0 again once its last has
};
// How one conv is launched: its tile configuration and the slices its K is split into.
struct TileLaunch {
  int tile = -1;
  int slices = 1;
  bool operator==(const TileLaunch& o) const { return tile == o.tile && slices == o.slices; }
};
// Slice `slice`'s K tiles: `count` from `first` (ceil(k_tiles / slices) each, the last the rest).
struct KRange {
  int first, count;
};
OCTET_HOST_DEVICE KRange k_range(int k_tiles, int slices, int slice) {
  const int per = ceil_div(k_tiles, slices), first = slice * per;
  return {first, first < k_tiles ? (k_tiles - first < per ? k_tiles - first : per) : 0};
}
// The output tile of block (x, y) in a grid of `tiles_m` blocks along M.
OCTET_HOST_DEVICE int output_tile(int block_x, int block_y, int tiles_m) { return block_y * tiles_m + block_x; }

// ---------------------------------------------------------------- host side
// Why a tile configuration cannot be compiled as a kernel (its loops assume
// these divisibilities), or "". Checked for every configuration by the tests.
std::string tile_invalid(const TileConfig& t);
// Why tile `tile` cannot run `p`, or "" (CUTLASS's can_implement).
std::string unsupported(const Problem& p, int tile);
// The tiles that can run `p`, the one expected to be fastest first, from a
// simple model: waves of resident blocks x K stages x the larger of the
// tensor-core time and a per-stage latency floor. `resident[i]`: blocks of
// tile i that fit on one multiprocessor (0: not usable). The environment
// variable OCTET_IMMA_TILE=<name> leaves only that tile (none if it cannot
// run p). The engine times these candidates (tile_tuner.h). With `split_k`,
// a tile that split_slices splits is a candidate twice, split and whole: the
// split's sums out and back in may cost more than its idle multiprocessors
// gain, which only timing tells (OCTET_IMMA_TILE leaves the split one).
std::vector<TileLaunch> tile_candidates(const Problem& p, const int* resident, int multiprocessors,
                                        bool split_k = false);
// The first candidate's tile, or -1 when no tile can run `p`.
int choose_tile(const Problem& p, const int* resident, int multiprocessors, bool split_k = false);
int tile_index(const std::string& name);  // -1 when unknown

// The slices K is split into for tile `tile` on `p` (1: none, and for tiles
// that do not split_k): where its blocks would keep fewer than half the `multiprocessors` busy, enough for
// about one block on each, at most kMaxSlices, each at least kMinSliceTiles
// K tiles; never an empty slice.
constexpr int kMaxSlices = 16, kMinSliceTiles = 2;
int split_slices(const Problem& p, int tile, int multiprocessors);
// The output tiles of `tile` on `p`, and the bytes of SplitK::partials and
// SplitK::arrivals it needs with `slices` slices.
int output_tiles(const Problem& p, int tile);
int64_t split_partial_bytes(const Problem& p, int tile, int slices);
int64_t split_arrival_bytes(const Problem& p, int tile);
// The most of either that any conv needs on a GPU of `multiprocessors`
// (split_slices splits only tiles of at most half as many blocks, into at
// most as many slices as make one block per multiprocessor).
int64_t split_partial_bytes_at_most(int multiprocessors);
int64_t split_arrival_bytes_at_most(int multiprocessors);
// A tile's name, with its split when it has one ("m16n64k128s4 K/16").
std::string launch_name(const TileLaunch& launch);

}  // namespace octet::cuda::igemm
