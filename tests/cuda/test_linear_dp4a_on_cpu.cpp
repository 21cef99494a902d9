// cuda-dp4a's linear-layer kernels (runtime/cuda/linear_dp4a_kernel.cuh; the
// CUDA backends' linear layers and output logits), compiled for the CPU and
// run there by tests/cuda/cuda_on_cpu.h, against dot products written out
// here: K shorter than a warp's 32 words and with a remainder, outputs that
// fill no whole block, signed and zero point -128 (stored uint8) inputs, a
// residual, a ReLU over an unsigned output.
// clang-format off
#include "tests/cuda/cuda_on_cpu.h"  // first: it stands in for CUDA in the kernel's header
#include "runtime/cuda/linear_dp4a_kernel.cuh"
// clang-format on

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace octet::cuda {
namespace {

struct LinearCase {
  int rows, depth, out_c;
  bool unsigned_x, residual, relu;
  int32_t zero_point;  // the output's
};

TEST(LinearDp4aOnCpu, MatchesTheDotProducts) {
  const LinearCase cases[] = {{1, 16, 10, false, false, false, 0},  {3, 400, 12, true, false, true, -128},
                              {5, 132, 7, true, true, false, 0},     {2, 4096, 33, false, true, true, 0},
                              {9, 84, 16, false, false, true, -128}, {1, 2048, 100, true, false, false, 0}};
  for (const LinearCase& t : cases) {
    std::mt19937 rng(t.rows * 977 + t.depth);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<int8_t> x(size_t(t.rows) * t.depth), w(size_t(t.out_c) * t.depth), skip(size_t(t.rows) * t.out_c);
    for (int8_t& v : x) v = int8_t(byte(rng));
    for (int8_t& v : w) v = int8_t(byte(rng));
    for (int8_t& v : skip) v = int8_t(byte(rng));
    std::vector<int32_t> bias(t.out_c), multiplier(t.out_c), shift(t.out_c, 24), skip_multiplier(t.out_c);
    for (int o = 0; o < t.out_c; ++o) {
      bias[o] = byte(rng) * 100;
      multiplier[o] = (1 << 14) + byte(rng) * 64;
      skip_multiplier[o] = (1 << 23) + byte(rng) * 1024;
    }
    RequantEpilogue e;
    e.bias = bias.data(), e.multiplier = multiplier.data(), e.shift = shift.data();
    e.relu = t.relu, e.zero_point = t.zero_point;
    if (t.residual) e.skip = skip.data(), e.skip_multiplier = skip_multiplier.data();

    const int64_t outputs = int64_t(t.rows) * t.out_c;
    std::vector<int8_t> y(outputs, int8_t{0x33});
    std::vector<int32_t> logits(outputs, -1);
    for (int64_t block = 0; block < (outputs + kLinearWarpsPerBlock - 1) / kLinearWarpsPerBlock; ++block) {
      cuda_on_cpu::BlockRun run;
      run.threads = 32 * kLinearWarpsPerBlock, run.block.x = unsigned(block);
      run_block(run, [&] {
        linear_dp4a_kernel(x.data(), t.unsigned_x, w.data(), outputs, t.depth, t.out_c, e, y.data());
      });
      run_block(run, [&] {
        linear_dp4a_logits_kernel(x.data(), t.unsigned_x, w.data(), outputs, t.depth, t.out_c, bias.data(),
                                  logits.data());
      });
    }
    for (int r = 0; r < t.rows; ++r)
      for (int o = 0; o < t.out_c; ++o) {
        int32_t acc = 0;
        for (int k = 0; k < t.depth; ++k)
          acc += stored_value(x[size_t(r) * t.depth + k], t.unsigned_x) * w[size_t(o) * t.depth + k];
        const int64_t at = int64_t(r) * t.out_c + o;
        const std::string where = "row " + std::to_string(r) + ", output " + std::to_string(o) + ", K " +
                                  std::to_string(t.depth) + (t.unsigned_x ? ", unsigned" : ", signed");
        ASSERT_EQ(logits[at], acc + bias[o]) << where;
        ASSERT_EQ(y[at], int8_t(requantize_stored_output(acc, o, at, e))) << where;
      }
  }
}

}  // namespace
}  // namespace octet::cuda
