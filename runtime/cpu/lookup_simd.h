// Byte lookups, each byte replaced by its entry of a 256-byte table: with
// AVX-512 VBMI (lookup_vbmi.cpp, 64 bytes per step: two vpermi2b over the
// table's halves and a blend by the index's top bit) and with AVX2
// (lookup_avx2.cpp, 32 bytes per step: a vpshufb of each 16-entry sixteenth
// of the table, kept where the index's high nibble picks it). Each file is
// compiled with its instruction set: call vbmi's only where
// cpu_has_avx512_vbmi() (kernels.h), avx2's where the CPU has AVX2; concats
// and activations use them.
#pragma once

#include <cstdint>

namespace octet::cpu {

// Both: dst row r = table[src byte + 128] for each of the `row_bytes` bytes
// of src row r, for `rows` rows: src's rows are adjacent, dst's `dst_stride`
// apart.
// Either form, or a kernel's own of the same shape (concat's copy and portable lookup).
using LookupRows = void (*)(const int8_t* src, int64_t rows, int64_t row_bytes, const int8_t* table, int8_t* dst,
                            int64_t dst_stride);

namespace vbmi {
void lookup_rows(const int8_t* src, int64_t rows, int64_t row_bytes, const int8_t* table, int8_t* dst,
                 int64_t dst_stride);
}  // namespace vbmi
namespace avx2 {
void lookup_rows(const int8_t* src, int64_t rows, int64_t row_bytes, const int8_t* table, int8_t* dst,
                 int64_t dst_stride);
}  // namespace avx2

}  // namespace octet::cpu
