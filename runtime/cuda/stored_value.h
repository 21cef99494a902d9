// How the CUDA runtime stores activations: centered, q - zero_point, so that
// a real 0 is a zero byte whatever the tensor's zero point, and the zero
// fill of cp.async, of the implicit GEMMs' loads and of every padding is a
// real 0. Zero point 0 (signed) stores int8 bytes, the CPU runtime's; zero
// point -128 (a non-negative tensor, graph/node_quant.h) stores uint8 bytes
// 0..255, which the tensor cores and dp4a multiply as unsigned. The CUDA
// runtime reads no other zero point (op_support.cpp). A wide value
// (NodeQuant::bits 9-16, zero point 0; cuda-imma only) is stored as two byte
// planes of the same layout, one after the other: its high bytes (int8,
// v >> 8), then its low bytes (uint8, v & 0xFF), v = 256 x high + low; a conv
// multiplies the high plane as s8, scales the sums by 256 and adds the low
// plane's as u8. Plain C++ with host+device functions, for the kernels and the
// tests' host executor.
#pragma once

#include <cstdint>

#include "common/requantize.h"
#include "runtime/cuda/int8x4.h"
#include "runtime/requant_epilogue.h"

namespace octet::cuda {

// Whether a tensor of this zero point is stored as uint8.
OCTET_HOST_DEVICE bool stored_unsigned(int32_t zero_point) { return zero_point != 0; }

// A stored byte's centered value (q - zero_point).
OCTET_HOST_DEVICE int32_t stored_value(int8_t byte, bool is_unsigned) {
  return is_unsigned ? static_cast<int32_t>(static_cast<uint8_t>(byte)) : byte;
}
OCTET_HOST_DEVICE int32_t stored_value(uint32_t word, int j, bool is_unsigned) {
  return is_unsigned ? unsigned_byte_of(word, j) : byte_of(word, j);
}

// The zero points of a two-input operator's inputs (a, b) and output: add, mul.
struct BinaryZeroPoints {
  int32_t a = 0, b = 0, out = 0;
};

// How a conv's input is stored.
enum class StoredInput { kSigned, kUnsigned, kWide };

// A wide value from its two stored bytes, and back.
OCTET_HOST_DEVICE int32_t wide_value(int8_t high, int8_t low) { return 256 * high + static_cast<uint8_t>(low); }
OCTET_HOST_DEVICE int32_t wide_value(uint32_t high, uint32_t low, int j) {  // element j of two words
  return 256 * byte_of(high, j) + unsigned_byte_of(low, j);
}
OCTET_HOST_DEVICE int32_t high_byte(int32_t v) { return v >> 8; }
OCTET_HOST_DEVICE int32_t low_byte(int32_t v) { return v & 0xFF; }

// The stored range of an output of `bits` bits: requantize()'s clamp, less the zero point.
struct StoredRange {
  int32_t lo, hi;
};
OCTET_HOST_DEVICE StoredRange stored_range(bool relu, int32_t zero_point, int32_t bits = 8) {
  return {::octet::lowest_output(relu, zero_point, bits) - zero_point, ::octet::highest_output(bits) - zero_point};
}

// requantize() of an output, stored: the same bits less the zero point.
OCTET_HOST_DEVICE int32_t requantize_stored(int32_t acc, int32_t multiplier, int32_t skip, int32_t skip_multiplier,
                                            int32_t shift, StoredRange r) {
  return ::octet::requantize(acc, multiplier, skip, skip_multiplier, shift, r.lo, 0, r.hi);
}

// requantize_output (requant_epilogue.h) for stored values: e.skip holds the
// residual stored, at e.skip_zero_point; the result is stored at e.zero_point.
OCTET_HOST_DEVICE int32_t requantize_stored_output(int32_t acc, int c, int64_t at, const RequantEpilogue& e) {
  const int32_t skip = e.skip ? stored_value(e.skip[at], stored_unsigned(e.skip_zero_point)) : 0;
  const int32_t skip_multiplier = e.skip ? e.skip_multiplier[c] : 0;
  return requantize_stored(acc + e.bias[c], e.multiplier[c], skip, skip_multiplier, e.shift[c],
                           stored_range(e.relu, e.zero_point));
}

// Channel c's stored output `v` through e's fused activation where it has
// one (RequantEpilogue::table): then the activation's stored byte, as int8.
OCTET_HOST_DEVICE int32_t through_table(int32_t v, int c, const RequantEpilogue& e) {
  if (!e.table) return v;
  return c < e.table_channels ? e.table[c * e.table_stride + static_cast<uint8_t>(v)] : 0;
}
// The same for a word of 4 stored outputs, of channels c .. c + 3. The kernels
// map each word they store, once packed: the requantization before it keeps
// its registers (a byte at a time, the depthwise rows kernel spilled).
OCTET_HOST_DEVICE uint32_t word_through_table(uint32_t word, int c, const RequantEpilogue& e) {
  if (!e.table) return word;
  return pack_int8x4(through_table(byte_of(word, 0), c, e), through_table(byte_of(word, 1), c + 1, e),
                     through_table(byte_of(word, 2), c + 2, e), through_table(byte_of(word, 3), c + 3, e));
}

}  // namespace octet::cuda
