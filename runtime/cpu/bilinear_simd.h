// The two blends of bilinear upsampling on the CPU (ops/upsample_bilinear.cpp),
// in int16 with a shift or in int32 with a division, portable and with AVX2
// (bilinear_avx2.cpp, compiled with it: call its forms only where the CPU has
// AVX2). Every form computes the same bits.
#pragma once

#include <cstdint>

namespace octet::cpu {

// A column's two input pixels (offsets into a blended row, in values) and
// their weights, summing to a power of two (ops::BilinearTaps).
struct ColumnTaps {
  int64_t left, right;
  int32_t left_weight, right_weight;
};

// Rows: v[k] = upper_weight * (upper[k] - zero_point) + lower_weight * (lower[k] - zero_point), k < count, in
// int16 (the weights sum to at most 128). Pixels: output pixel x of `columns` of `channels` values each,
// y[c] = requantize_by_shift(left_weight * v[left + c] + right_weight * v[right + c], shift, zero_point).
struct BilinearBlends {
  void (*rows)(const int8_t* upper, const int8_t* lower, int64_t count, int32_t upper_weight, int32_t lower_weight,
               int32_t zero_point, int16_t* v);
  void (*pixels)(const int16_t* v, const ColumnTaps* columns, int64_t count, int64_t channels, int32_t shift,
                 int32_t zero_point, int8_t* y);
};

// Where the weights' sum `total` is no power of two or a row's weights sum to more than 128: rows into int32,
// v[k] as above; pixels y[c] = requantize_by_division(left_weight * v[left + c] + right_weight * v[right + c],
// total, zero_point).
struct BilinearDivisions {
  void (*rows)(const int8_t* upper, const int8_t* lower, int64_t count, int32_t upper_weight, int32_t lower_weight,
               int32_t zero_point, int32_t* v);
  void (*pixels)(const int32_t* v, const ColumnTaps* columns, int64_t count, int64_t channels, int32_t total,
                 int32_t zero_point, int8_t* y);
};

namespace avx2 {
extern const BilinearBlends bilinear_blends;
extern const BilinearDivisions bilinear_divisions;
}

}  // namespace octet::cpu
