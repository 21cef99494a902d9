// Test values over many binades (normal values scaled by 2^-8 .. 2^8), so
// that summing them in another order changes the bits of the sum: what the
// tests of fixed-order float chains (OrderedGemm, GPTQ's statistics) feed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace octet {

inline std::vector<float> wide_values(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-8, 8);
  std::vector<float> v(n);
  for (float& x : v) x = std::ldexp(normal(gen), exponent(gen));
  return v;
}

}  // namespace octet
