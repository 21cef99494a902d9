// Four int8 values as one 32-bit word, as the CUDA kernels store them, and
// runs of such words. Plain C++ with host+device functions (no CUDA header),
// so that kernels can also be compiled for the CPU (tests/cuda/cuda_on_cpu.h)
// and run by the host executor of the device layout (tests/ops).
#pragma once

#include <cstdint>
#include <cstring>

#include "common/requantize.h"

// Loops of a constant trip count unrolled on the device (host compilers do not know the pragma).
#ifdef __CUDA_ARCH__
#define OCTET_DEVICE_UNROLL _Pragma("unroll")
#else
#define OCTET_DEVICE_UNROLL
#endif

namespace octet::cuda {

// Four int8 values (in [-128, 127]) as one little-endian word, element 0 at the lowest address.
OCTET_HOST_DEVICE uint32_t pack_int8x4(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  return (static_cast<uint32_t>(v0) & 0xFFu) | ((static_cast<uint32_t>(v1) & 0xFFu) << 8) |
         ((static_cast<uint32_t>(v2) & 0xFFu) << 16) | ((static_cast<uint32_t>(v3) & 0xFFu) << 24);
}

// Element j of a word.
OCTET_HOST_DEVICE int32_t byte_of(uint32_t word, int j) { return static_cast<int8_t>(word >> (8 * j)); }

// Element j of a word read as uint8 (a stored unsigned value, stored_value.h).
OCTET_HOST_DEVICE int32_t unsigned_byte_of(uint32_t word, int j) {
  return static_cast<int32_t>((word >> (8 * j)) & 0xFFu);
}

// c + the dot product of a's and b's four int8 elements (dp4a.s32.s32).
OCTET_HOST_DEVICE int32_t dp4a_signed(uint32_t a, uint32_t b, int32_t c) {
#ifdef __CUDA_ARCH__
  return __dp4a(static_cast<int>(a), static_cast<int>(b), c);
#else
  for (int j = 0; j < 4; ++j) c += byte_of(a, j) * byte_of(b, j);
  return c;
#endif
}

// c + the dot product of a's four uint8 and b's four int8 elements (dp4a.u32.s32).
OCTET_HOST_DEVICE int32_t dp4a_unsigned_signed(uint32_t a, uint32_t b, int32_t c) {
#ifdef __CUDA_ARCH__
  int32_t d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  for (int j = 0; j < 4; ++j) c += unsigned_byte_of(a, j) * byte_of(b, j);
  return c;
#endif
}

// The larger of each pair of uint8 elements (the device's __vmaxu4).
OCTET_HOST_DEVICE uint32_t max_uint8x4(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __vmaxu4(a, b);
#else
  const auto larger = [&](int j) {
    return unsigned_byte_of(a, j) > unsigned_byte_of(b, j) ? unsigned_byte_of(a, j) : unsigned_byte_of(b, j);
  };
  return pack_int8x4(larger(0), larger(1), larger(2), larger(3));
#endif
}

// The larger of each pair of elements (the device's __vmaxs4).
OCTET_HOST_DEVICE uint32_t max_int8x4(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __vmaxs4(a, b);
#else
  const auto larger = [&](int j) { return byte_of(a, j) > byte_of(b, j) ? byte_of(a, j) : byte_of(b, j); };
  return pack_int8x4(larger(0), larger(1), larger(2), larger(3));
#endif
}

// `Words` 4-byte values (int8 words, or floats) from `p` (aligned to 4 x
// Words bytes): one 16-byte load on the device for 4.
template <typename T, int Words>
OCTET_HOST_DEVICE void load_words(const void* p, T (&v)[Words]) {
  static_assert(sizeof(T) == 4, "load_words reads 4-byte values");
#ifdef __CUDA_ARCH__
  if constexpr (Words == 4) {
    const uint4 q = *reinterpret_cast<const uint4*>(p);
    memcpy(v, &q, sizeof v);
  } else {
    for (int i = 0; i < Words; ++i) {
      const uint32_t w = reinterpret_cast<const uint32_t*>(p)[i];
      memcpy(&v[i], &w, sizeof w);
    }
  }
#else
  std::memcpy(v, p, sizeof v);
#endif
}

template <int Words>
OCTET_HOST_DEVICE void store_words(int8_t* p, const uint32_t (&v)[Words]) {
#ifdef __CUDA_ARCH__
  if constexpr (Words == 4) {
    *reinterpret_cast<uint4*>(p) = make_uint4(v[0], v[1], v[2], v[3]);
  } else {
    for (int i = 0; i < Words; ++i) reinterpret_cast<uint32_t*>(p)[i] = v[i];
  }
#else
  std::memcpy(p, v, sizeof v);
#endif
}

}  // namespace octet::cuda
