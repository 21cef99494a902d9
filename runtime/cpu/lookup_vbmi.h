// Byte lookups with AVX-512 VBMI (lookup_vbmi.cpp, compiled with its flags):
// each byte replaced by its entry of a 256-byte table, 64 bytes per step (two
// vpermi2b over the table's halves and a blend by the index's top bit). Call
// only where cpu_has_avx512_vbmi() (kernels.h); concats and activations use it.
#pragma once

#include <cstdint>

namespace octet::cpu {

namespace vbmi {
// dst row r = table[src byte + 128] for each of the `row_bytes` bytes of src
// row r, for `rows` rows: src's rows are adjacent, dst's `dst_stride` apart.
void lookup_rows(const int8_t* src, int64_t rows, int64_t row_bytes, const int8_t* table, int8_t* dst,
                 int64_t dst_stride);
}  // namespace vbmi

}  // namespace octet::cpu
