// The AVX2 division of bilinear upsampling (runtime/cpu/bilinear_avx2.cpp's
// divide8: a float quotient corrected by its remainder) against
// requantize_by_division, the int8 reference's, over the whole range a
// weighted mean's sum can take: +-255 x the weights' sum, half-way cases
// and their neighbours, sums from 3 to 2^22. The operator harness compares
// whole upsamplings; its random values seldom reach these edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "common/requantize.h"
#include "runtime/cpu/bilinear_simd.h"
#include "runtime/cpu/kernels.h"

namespace octet {
namespace {

#if defined(__x86_64__)
TEST(BilinearDivisions, Avx2RoundsEverySumAsRequantizeByDivision) {
  if (!cpu::kernel_path_supported(cpu::KernelPath::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2";
  std::mt19937 rng(54);
  for (const int32_t total : {3, 6, 12, 121, 285, 2111 * 3, 4095 * 65, 2047 * 1023, 2047 * 2047, 1 << 22})
    for (const int32_t zero_point : {0, -128}) {
      // One output pixel of 8191 channels (8-lane blocks and a tail), its left tap weighing 1 and its right 0:
      // each channel's sum is its blended value.
      std::vector<int32_t> sums;
      for (int32_t k = -256; k <= 256; ++k)
        for (int32_t near : {-1, 0, 1}) sums.push_back(k * total + total / 2 + near);  // about half-way
      sums.push_back(-255 * total), sums.push_back(255 * total);
      std::uniform_int_distribution<int32_t> any(-255 * total, 255 * total);
      while (sums.size() < 8191) sums.push_back(any(rng));
      for (int32_t& s : sums) s = std::clamp(s, -255 * total, 255 * total);
      const cpu::ColumnTaps only_left = {0, 0, 1, 0};
      std::vector<int8_t> y(sums.size());
      cpu::avx2::bilinear_divisions.pixels(sums.data(), &only_left, 1, static_cast<int64_t>(sums.size()), total,
                                           zero_point, y.data());
      for (size_t c = 0; c < sums.size(); ++c)
        ASSERT_EQ(y[c], requantize_by_division(sums[c], total, zero_point)) << sums[c] << " / " << total;
    }
}
#endif

}  // namespace
}  // namespace octet
