// The cuda-imma kernel's own source (runtime/cuda/conv2d_imma_kernel.cuh),
// compiled for the CPU and run there by tests/cuda/cuda_on_cpu.h: every block of
// every tile configuration that can run each shape of the table
// (tests/cuda/imma_cases.h), whose int8 outputs must equal the CPU runtime's
// (less the zero point: runtime/cuda/stored_value.h). The pairs of shape and
// tile take turns: signed tensors; tensors at zero point -128 (stored uint8,
// the input multiplied by mma's u8 x s8); wide input, output and residual
// (two planes each, the input's multiplied twice). Each case runs twice:
// cp.async copies landing when issued and wgmmas multiplying only when
// waited for (a stage refilled too early is read refilled), with the threads
// first to last and the shared memory at address 16 (not on 1,024 bytes, as
// the wgmma tiles' stages must be); and copies landing only when waited for
// and wgmmas when issued (a stage read too early is read unfilled), last to
// first, the shared memory at address 0.
// clang-format off
#include "tests/cuda/cuda_on_cpu.h"  // first: it stands in for CUDA in the kernel's header
#include "runtime/cuda/conv2d_imma_kernel.cuh"
// clang-format on

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "tests/cuda/imma_cases.h"

namespace octet::cuda::igemm {
namespace {

// The kernel's output [M][stored out_c] (a wide one's two planes), every block run on the CPU,
// with K split in `slices` (SplitK; the slices of each output tile run last first).
std::vector<int8_t> run_kernel(const Problem& p, const Data& d, int tile, bool copies_at_wait, bool last_to_first,
                               const RequantEpilogue& e, int slices = 1) {
  const TileConfig T = tile_config(tile);
  std::vector<int8_t> output(size_t(p.rows()) * p.out_c * (d.bits > 8 ? 2 : 1), int8_t{0x33});
  std::vector<int32_t> partials(size_t(split_partial_bytes(p, tile, slices) / 4), 0x55555555);
  std::vector<uint32_t> arrivals(size_t(output_tiles(p, tile)), 0);
  SplitK split;
  split.slices = slices, split.partials = partials.data(), split.arrivals = arrivals.data();
  for (int bx = 0; bx < ceil_div(p.rows(), T.bm); ++bx)
    for (int by = 0; by < ceil_div(p.out_c, T.bn); ++by)
      for (int bz = slices - 1; bz >= 0; --bz) {
        cuda_on_cpu::BlockRun run;
        run.threads = T.threads(), run.shared_bytes = T.shared_bytes();
        run.block = {unsigned(bx), unsigned(by), unsigned(bz)};
        run.copies_at_wait = copies_at_wait, run.wgmma_at_wait = !copies_at_wait, run.last_to_first = last_to_first;
        run.shared_start = copies_at_wait ? 0 : 16;  // the wgmma tiles' stages move to 1,024 bytes
        run.programmatic = true;                     // as the engine may launch it (conv2d_imma.cuh)
        run.unwritten = d.packed.data(), run.unwritten_bytes = int64_t(d.packed.size());  // the weights
        with_kernel(tile, d.stored_input(), [&](auto t, auto u) {
          cuda_on_cpu::run_block(run, [&] {
            conv2d_imma_kernel<decltype(t)::value, decltype(u)::value>(p, d.device_input.data(), d.packed.data(), e,
                                                                       output.data(), split);
          });
        });
      }
  for (const uint32_t a : arrivals) EXPECT_EQ(a, 0u) << "an output tile's arrivals not reset for the next launch";
  return output;
}

class ImmaKernelOnCpu : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ImmaKernelOnCpu, MatchesTheCpuRuntime) {
  const auto [conv, tile] = GetParam();
  const Conv& v = kConvs[conv];
  const Problem p = problem_of(v);
  ASSERT_EQ(unsupported(p, tile), "");
  const StoredInput values[] = {StoredInput::kSigned, StoredInput::kUnsigned, StoredInput::kWide};
  const Data d = make_data(v, p, conv % 2 == 1, conv % 3 != 2, 2000 + 17 * conv + tile, values[(conv + tile) % 3]);
  const std::vector<int8_t> expected = cpu_outputs(v, p, d);
  const size_t plane = size_t(p.rows()) * p.out_c;
  // The second run splits K in up to 3 slices (as split_slices would: none empty), where the tile can.
  const int k_tiles = ceil_div(p.packed_depth(), tile_config(tile).bk);
  const int slices = tile_config(tile).splits_k() ? ceil_div(k_tiles, ceil_div(k_tiles, 3)) : 1;
  for (const bool late : {false, true}) {
    const std::vector<int8_t> output =
        run_kernel(p, d, tile, late, late, epilogue_of(d, d.device_skip.data()), late ? slices : 1);
    for (int m = 0; m < p.rows(); ++m)
      for (int n = 0; n < p.out_c; ++n) {
        const size_t at = size_t(m) * v.out_c + n, stored_at = size_t(m) * p.out_c + n;
        int32_t want = 0, got = output[stored_at];
        if (d.bits > 8) {
          int16_t level = 0;
          if (n < v.out_c) std::memcpy(&level, &expected[2 * at], 2);
          want = level, got = wide_value(output[stored_at], output[plane + stored_at]);
        } else if (n < v.out_c) {
          want = int8_t(expected[at] - d.zero_point);
        }
        ASSERT_EQ(got, want) << "pixel " << m << ", channel " << n
                             << (late ? ", copies landing at the wait, K in " + std::to_string(slices) + " slices" : "");
      }
  }
}

// A fused activation (RequantEpilogue::table): each stored output through
// its channel's table, the padding channels 0, on each tile (each has its
// epilogue) with the first shape it runs whose channels are padded, else its
// first; signed and unsigned outputs, one table for every channel and one per channel.
TEST(ImmaKernelOnCpu, StoresThroughAFusedActivationTable) {
  std::vector<int> shape_of(kTileCount, -1);
  for (const auto& [conv, tile] : runnable_shapes_and_tiles())
    if (shape_of[tile] < 0 || (kConvs[shape_of[tile]].out_c % kChannelAlignment == 0 &&
                               kConvs[conv].out_c % kChannelAlignment != 0))
      shape_of[tile] = conv;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (int tile = 0; tile < kTileCount; ++tile) {
    const int conv = shape_of[tile];
    ASSERT_GE(conv, 0) << tile_config(tile).name << " runs no shape";
    const Conv& v = kConvs[conv];
    const Problem p = problem_of(v);
    const Data d = make_data(v, p, conv % 2 == 1, conv % 3 != 2, 3000 + tile,
                             tile % 3 == 0 ? StoredInput::kUnsigned : StoredInput::kSigned);
    const int stride = tile % 2 == 1 ? 256 : 0;
    std::vector<int8_t> tables(size_t(stride ? v.out_c : 1) * 256);
    for (int8_t& t : tables) t = static_cast<int8_t>(byte(rng));
    RequantEpilogue e = epilogue_of(d, d.device_skip.data());
    e.table = tables.data(), e.table_stride = stride, e.table_channels = v.out_c;
    const std::vector<int8_t> expected = cpu_outputs(v, p, d);
    const std::vector<int8_t> output = run_kernel(p, d, tile, false, true, e);
    for (int m = 0; m < p.rows(); ++m)
      for (int n = 0; n < p.out_c; ++n) {
        const uint8_t stored = static_cast<uint8_t>(expected[size_t(m) * v.out_c + std::min(n, v.out_c - 1)] -
                                                    d.zero_point);
        const int8_t want = n < v.out_c ? tables[size_t(n) * stride + stored] : int8_t{0};
        ASSERT_EQ(output[size_t(m) * p.out_c + n], want)
            << tile_config(tile).name << " on " << conv_name(v) << ": pixel " << m << ", channel " << n;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ImmaKernelOnCpu, every_runnable_shape_and_tile(),
                         [](const auto& info) { return shape_and_tile_name(info.param); });

}  // namespace
}  // namespace octet::cuda::igemm
