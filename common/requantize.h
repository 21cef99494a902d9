// The one requantization function of octet, shared by the CPU runtime, the
// CUDA kernels and the epilogue after cuBLASLt, so every backend computes the
// same bits.
//
// A real multiplier M (output scale / accumulator scale) is stored as an int32
// `multiplier` and a right `shift` with M = multiplier * 2^-shift. For a conv
// or linear output channel the result is
//
//   q = clamp(((acc * multiplier + skip * skip_multiplier + 2^(shift-1)) >> shift) + zero_point, lo, hi)
//
// computed exactly in 64-bit integers: `>>` is an arithmetic shift, so the
// rounding is half-way cases toward +infinity (floor(x + 1/2)). `skip` is the
// int8 residual input of a fused add (0 when there is none); a standalone add
// passes its two inputs as acc and skip; pools pass their window sum as acc.
// zero_point is the output's stored value of a real 0 (graph/node_quant.h):
// 0, or -128 for a non-negative tensor stored as uint8 shifted by 128. Inputs
// with a zero point pass acc and skip less theirs (a real 0 is 0 here). lo is
// the zero point with a fused ReLU, -128 otherwise; hi is 127. A wide output
// (graph/node_quant.h NodeQuant::bits, 9-16 bits stored as int16) has lo and
// hi at its own range: lowest_output and highest_output of its bits.
//
// Ranges (checked where multipliers are made, quant/fixed_point.h, and when a
// quantized model is loaded, qmodel/quantized_model.cpp):
// 0 <= multiplier, skip_multiplier < 2^31, 1 <= shift <= 62. With |acc| < 2^31
// and |skip| <= 2^15 (a wide residual) the 64-bit sum cannot overflow.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define OCTET_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define OCTET_HOST_DEVICE inline
#endif

namespace octet {

OCTET_HOST_DEVICE int32_t requantize(int32_t acc, int32_t multiplier, int32_t skip, int32_t skip_multiplier,
                                     int32_t shift, int32_t lo, int32_t zero_point = 0, int32_t hi = 127) {
  const int64_t round = static_cast<int64_t>(1) << (shift - 1);
#if defined(__CUDA_ARCH__)
  // The same exact sum as below, as two 32 x 32 + 64-bit multiply-adds:
  // nvcc makes each 64-bit product of the C++ form an unsigned multiply with
  // sign corrections, a quarter of a tensor-core epilogue's instructions.
  int64_t x;
  asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(x) : "r"(acc), "r"(multiplier), "l"(round));
  asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(x) : "r"(skip), "r"(skip_multiplier), "l"(x));
#else
  const int64_t x = static_cast<int64_t>(acc) * multiplier + static_cast<int64_t>(skip) * skip_multiplier + round;
#endif
  const int64_t q = (x >> shift) + zero_point;
  return static_cast<int32_t>(q < lo ? lo : (q > hi ? hi : q));
}

// requantize with multiplier 1 and no residual, in 32 bits: floor(acc / 2^shift + 1/2) + zero_point,
// clamped to int8. The same bits as requantize(acc, 1, 0, 0, shift, -128, zero_point) where
// |acc| + 2^(shift-1) < 2^31; a weighted mean whose weights sum to 2^shift (upsample_bilinear) divides by it
// so, in a loop a compiler vectorizes.
OCTET_HOST_DEVICE int32_t requantize_by_shift(int32_t acc, int32_t shift, int32_t zero_point) {
  const int32_t q = ((acc + (1 << (shift - 1))) >> shift) + zero_point;
  return q < -128 ? -128 : (q > 127 ? 127 : q);
}

// floor(acc / divisor + 1/2) + zero_point, clamped to int8, exactly: a weighted mean of centred int8 values whose
// weights sum to `divisor` (upsample_bilinear's, with corners aligned or by a factor not a power of two), so
// |acc| <= 255 divisor; divisor from 1 to 2^22, the bound that keeps 2 acc + divisor in 32 bits. The same bits as
// requantize_by_shift where divisor is 2^shift.
OCTET_HOST_DEVICE int32_t requantize_by_division(int32_t acc, int32_t divisor, int32_t zero_point) {
  const int32_t n = 2 * acc + divisor, d = 2 * divisor;
  const int32_t q = (n >= 0 ? n / d : -((d - 1 - n) / d)) + zero_point;
  return q < -128 ? -128 : (q > 127 ? 127 : q);
}

// The lowest stored output: a real 0 (the zero point) with a fused ReLU, else
// the bottom of the output's bits: -128 for int8.
OCTET_HOST_DEVICE int32_t lowest_output(bool relu, int32_t zero_point, int32_t bits = 8) {
  return relu ? zero_point : -(1 << (bits - 1));
}

// The highest stored output of a tensor of `bits` bits: 127 for int8.
OCTET_HOST_DEVICE int32_t highest_output(int32_t bits = 8) { return (1 << (bits - 1)) - 1; }

// Levels above a real 0 in int8's bytes: 127 signed, 255 at zero point -128
// (the quantizer's scale is this over amax).
OCTET_HOST_DEVICE int32_t positive_levels(int32_t zero_point) { return 127 - zero_point; }

// The largest |x - zero point| of a stored x: 128 signed, 255 at zero point
// -128, 2^(bits-1) for a wide tensor (what accumulator bounds multiply the
// weights by).
OCTET_HOST_DEVICE int32_t max_centered_input(int32_t zero_point, int32_t bits = 8) {
  if (bits > 8) return 1 << (bits - 1);
  return 128 + zero_point > 127 - zero_point ? 128 + zero_point : 127 - zero_point;
}

// Quantization of the float input image (and of a float node's output):
// q = clamp(rint(x * scale) + zero_point, -128, 127) (round half to even; NaN
// becomes a real 0). A single multiply, so host and device agree exactly.
OCTET_HOST_DEVICE int8_t quantize_input(float x, float scale, int32_t zero_point = 0) {
#if defined(__CUDA_ARCH__)
  float r = rintf(__fmul_rn(x, scale));
#else
  float r = __builtin_rintf(x * scale);
#endif
  r = r != r ? 0.0f : r;
  r += static_cast<float>(zero_point);
  r = r < -128.0f ? -128.0f : (r > 127.0f ? 127.0f : r);
  return static_cast<int8_t>(r);
}

}  // namespace octet
