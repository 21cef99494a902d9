#include "tests/cuda/ptx_isa.h"

#include <string>
#include <vector>

#include "common/error.h"

namespace octet::ptx {

namespace {

int8_t byte_of(uint32_t word, int b) { return static_cast<int8_t>(word >> (8 * b)); }

}  // namespace

std::array<Registers4, 32> ldmatrix_x4(const int8_t* shared, size_t bytes, const std::array<int, 32>& address) {
  for (int lane = 0; lane < 32; ++lane)
    if (address[lane] < 0 || address[lane] % 16 != 0 || size_t(address[lane]) + 16 > bytes)
      fail("ldmatrix: lane " + std::to_string(lane) + "'s row at shared byte " + std::to_string(address[lane]) +
           " is not 16 aligned bytes within the " + std::to_string(bytes) + " of shared memory");
  std::array<Registers4, 32> out{};
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 4; ++j) {
      const int8_t* row = shared + address[8 * j + lane / 4] + 4 * (lane % 4);
      uint32_t w = 0;
      for (int b = 0; b < 4; ++b) w |= uint32_t(uint8_t(row[b])) << (8 * b);
      out[lane][j] = w;
    }
  return out;
}

// g = lane / 4, t = lane % 4:
// A a0: row g, cols 4t..4t+3; a1: row g+8; a2: row g, cols 16+4t..; a3: row g+8, cols 16+4t..
// B b0: rows (k) 4t..4t+3, col g; b1: rows 16+4t..
// D d0, d1: row g, cols 2t, 2t+1; d2, d3: row g+8.
namespace {
// .atype s8, or u8 where a_unsigned; .btype s8.
void mma_m16n8k32(std::array<Registers4, 32>& d, const std::array<Registers4, 32>& a,
                  const std::array<Registers2, 32>& b, bool a_unsigned) {
  int32_t A[16][32];
  int8_t B[32][8];
  const auto a_element = [&](uint32_t word, int x) {
    return a_unsigned ? int32_t(uint8_t(byte_of(word, x))) : int32_t(byte_of(word, x));
  };
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int x = 0; x < 4; ++x) {
      A[g][4 * t + x] = a_element(a[lane][0], x);
      A[g + 8][4 * t + x] = a_element(a[lane][1], x);
      A[g][16 + 4 * t + x] = a_element(a[lane][2], x);
      A[g + 8][16 + 4 * t + x] = a_element(a[lane][3], x);
      B[4 * t + x][g] = byte_of(b[lane][0], x);
      B[16 + 4 * t + x][g] = byte_of(b[lane][1], x);
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + i % 2;
      int32_t sum = 0;
      for (int k = 0; k < 32; ++k) sum += A[row][k] * int32_t(B[k][col]);
      d[lane][i] = uint32_t(int32_t(d[lane][i]) + sum);
    }
  }
}
}  // namespace

void mma_m16n8k32_s8(std::array<Registers4, 32>& d, const std::array<Registers4, 32>& a,
                     const std::array<Registers2, 32>& b) {
  mma_m16n8k32(d, a, b, false);
}

void mma_m16n8k32_u8s8(std::array<Registers4, 32>& d, const std::array<Registers4, 32>& a,
                       const std::array<Registers2, 32>& b) {
  mma_m16n8k32(d, a, b, true);
}

int wgmma_operand_address(uint64_t descriptor, int row, int k) {
  const int start = int(descriptor & 0x3FFF) << 4, stride = int((descriptor >> 32) & 0x3FFF) << 4;
  const int base_offset = int((descriptor >> 49) & 7), mode = int(descriptor >> 62);
  if (mode != 1 || base_offset != 0)
    fail("wgmma: descriptor with swizzle mode " + std::to_string(mode) + " and base offset " +
         std::to_string(base_offset) + ": only the 128-byte swizzle at base offset 0 is emulated");
  const int linear = start + row / 8 * stride + row % 8 * 128 + k;
  return linear ^ ((linear >> 7) & 7) << 4;
}

void wgmma_m64nNk32(const int8_t* shared, size_t bytes, uint32_t start, uint64_t a, uint64_t b, int n,
                    bool a_unsigned, const std::array<int32_t*, 128>& d) {
  if (n < 8 || n > 256 || n % 8 != 0) fail("wgmma: no shape m64n" + std::to_string(n) + "k32");
  const auto operand = [&](uint64_t descriptor, int row, int k) {
    const int at = wgmma_operand_address(descriptor, row, k) - int(start);
    if (at < 0 || size_t(at) >= bytes)
      fail("wgmma: operand byte at shared " + std::to_string(at) + ", outside the " + std::to_string(bytes));
    return shared[at];
  };
  std::vector<int32_t> A(64 * 32), B(size_t(n) * 32);
  for (int row = 0; row < 64; ++row)
    for (int k = 0; k < 32; ++k) {
      const int8_t v = operand(a, row, k);
      A[row * 32 + k] = a_unsigned ? int32_t(uint8_t(v)) : int32_t(v);
    }
  for (int col = 0; col < n; ++col)
    for (int k = 0; k < 32; ++k) B[size_t(col) * 32 + k] = operand(b, col, k);
  for (int t = 0; t < 128; ++t) {
    const int w = t / 32, lane = t % 32;
    for (int i = 0; i < n / 2; ++i) {
      const int row = 16 * w + lane / 4 + 8 * (i % 4 / 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
      int32_t sum = 0;
      for (int k = 0; k < 32; ++k) sum += A[row * 32 + k] * B[size_t(col) * 32 + k];
      d[t][i] = int32_t(uint32_t(d[t][i]) + uint32_t(sum));
    }
  }
}

}  // namespace octet::ptx
