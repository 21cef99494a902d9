// The network tail's kernel (runtime/cuda/pool_linear_kernel.cuh: global
// average pool and the output linear layer's logits in one launch), compiled
// for the CPU and run there by tests/cuda/cuda_on_cpu.h, against the pool and the
// dot products written out here, on shapes that exercise its loops: more
// channels than threads, more classes than warps, a 1x1 plane, a last tile of
// fewer images than a block takes, 1 to 8 images a block, classes split over blocks; signed and
// unsigned (zero point -128) inputs and pooled values, stored centered
// (runtime/cuda/stored_value.h).
// clang-format off
#include "tests/cuda/cuda_on_cpu.h"  // first: it stands in for CUDA in the kernel's header
#include "runtime/cuda/pool_linear_kernel.cuh"
// clang-format on

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/requantize.h"

namespace octet::cuda {
namespace {

struct TailCase {
  int batch, h, w, channels, stored, classes;  // stored: channels padded with zeros
  int images_per_block, classes_per_block;
  int32_t in_zero_point, pool_zero_point;
};

TEST(PoolLogitsKernelOnCpu, MatchesThePoolAndTheDotProducts) {
  const TailCase cases[] = {
      {3, 4, 4, 60, 64, 10, 8, 10, 0, 0},           {11, 8, 8, 10, 16, 10, 4, 3, -128, -128},
      {1, 1, 1, 512, 512, 100, 1, 100, 0, -128},    {17, 2, 2, 4093, 4096, 9, 8, 4, -128, 0},
      {8, 3, 3, 2048, 2048, 40, 2, 16, -128, -128}, {9, 7, 7, 64, 64, 10, 1, 10, 0, 0},
      {5, 4, 4, 512, 512, 10, 2, 10, 0, -128}};
  for (const TailCase& t : cases) {
    std::mt19937 rng(t.batch * 131 + t.stored);
    std::uniform_int_distribution<int> byte(-128, 127);
    const int plane = t.h * t.w;
    // Stored centered: the CPU's value less the zero point, 0..255 where it is -128.
    std::vector<int32_t> centered(size_t(t.batch) * plane * t.stored, 0);
    std::vector<int8_t> in(centered.size(), 0), weights(size_t(t.classes) * t.stored, 0);
    for (size_t i = 0; i < in.size(); ++i)
      if (int(i % t.stored) < t.channels) {
        centered[i] = byte(rng) - t.in_zero_point;
        in[i] = int8_t(centered[i]);
      }
    for (size_t i = 0; i < weights.size(); ++i)
      if (int(i % t.stored) < t.channels) weights[i] = int8_t(byte(rng));
    std::vector<int32_t> bias(t.classes);
    for (int32_t& b : bias) b = byte(rng) * 1000;
    const int32_t shift = 24, multiplier = (1 << shift) / plane;  // about the mean

    std::vector<int32_t> logits(size_t(t.batch) * t.classes, -1);
    const int tiles = (t.batch + t.images_per_block - 1) / t.images_per_block;
    const int chunks = (t.classes + t.classes_per_block - 1) / t.classes_per_block;
    for (int x = 0; x < tiles; ++x)
      for (int y = 0; y < chunks; ++y) {
        cuda_on_cpu::BlockRun run;
        run.threads = kPoolLogitsThreads, run.shared_bytes = t.images_per_block * t.stored;
        run.block.x = unsigned(x), run.block.y = unsigned(y);
        run_block(run, [&] {
          global_avg_pool_logits_kernel(in.data(), t.batch, plane, t.stored, multiplier, shift, t.in_zero_point,
                                        t.pool_zero_point, weights.data(), t.classes, t.images_per_block,
                                        t.classes_per_block, bias.data(), logits.data());
        });
      }
    for (int n = 0; n < t.batch; ++n) {
      std::vector<int32_t> pooled(t.stored);
      for (int c = 0; c < t.stored; ++c) {
        int32_t sum = 0;
        for (int p = 0; p < plane; ++p) sum += centered[(size_t(n) * plane + p) * t.stored + c];
        pooled[c] = requantize(sum, multiplier, 0, 0, shift, -128, t.pool_zero_point) - t.pool_zero_point;
      }
      for (int o = 0; o < t.classes; ++o) {
        int32_t want = bias[o];
        for (int c = 0; c < t.stored; ++c) want += pooled[c] * weights[size_t(o) * t.stored + c];
        ASSERT_EQ(logits[size_t(n) * t.classes + o], want)
            << "image " << n << ", class " << o << ", " << t.stored << " channels, " << t.classes << " classes";
      }
    }
  }
}

}  // namespace
}  // namespace octet::cuda
