// The CUDA runtime's element-wise operators (add, relu), one output byte per
// thread: each thread's work as a plain C++ function with host and device
// qualifiers, so that the host executor of the device layout (tests/ops)
// runs the kernels' own arithmetic on any machine. Values are stored as
// stored_value.h says; padding channels are zeros in and zeros out.
#pragma once

#include <cstdint>

#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

// Add: requantize(a, multiplier_a, b, multiplier_b, shift), each input read at
// its own zero point and the output clamped to `range`.
struct AddOperands {
  bool unsigned_a = false, unsigned_b = false;
  int32_t multiplier_a = 0, multiplier_b = 0, shift = 0;
  StoredRange range{0, 0};
};
OCTET_HOST_DEVICE void add_element(const int8_t* a, const int8_t* b, const AddOperands& o, int64_t e, int8_t* y) {
  y[e] = static_cast<int8_t>(requantize_stored(stored_value(a[e], o.unsigned_a), o.multiplier_a,
                                               stored_value(b[e], o.unsigned_b), o.multiplier_b, o.shift, o.range));
}

// ReLU at one zero point: an unsigned value is never below its real 0, so copied.
OCTET_HOST_DEVICE void relu_element(const int8_t* x, bool is_unsigned, int64_t e, int8_t* y) {
  y[e] = is_unsigned || x[e] > 0 ? x[e] : int8_t{0};
}

}  // namespace octet::cuda
