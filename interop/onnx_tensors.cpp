#include "interop/onnx_tensors.h"

#include <cmath>
#include <cstring>

#include "common/error.h"

namespace octet::onnx_import {

namespace {

// The element count of `t`'s dimensions; fails on a negative dimension or one
// past 2^31 elements (more than any file octet reads could hold).
int64_t element_count(const onnx::TensorProto& t, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    check(d >= 0, what + " has a negative dimension");
    check(d == 0 || n <= (int64_t{1} << 31) / d, what + " has more than 2^31 elements");
    n *= d;
  }
  return n;
}

void check_internal(const onnx::TensorProto& t, const std::string& what) {
  check(t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0,
        what + " keeps its data in an external file, which a model in memory cannot read (import the .onnx file, "
               "its data file beside it)");
}

Shape shape_of(const onnx::TensorProto& t) { return Shape(t.dims().begin(), t.dims().end()); }

// The element count of `t`'s dimensions, checked against the values it
// stores (raw_data's bytes, or its typed field) before anything is allocated:
// dimensions cannot promise more than the file holds. For the floating types
// and INT32, INT64.
int64_t stored_count(const onnx::TensorProto& t, const std::string& what) {
  const int64_t n = element_count(t, what);
  const int32_t type = t.data_type();
  const bool sixteen = type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  const bool sixty_four = type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::INT64;
  if (t.has_raw_data()) {
    const int64_t bytes = static_cast<int64_t>(t.raw_data().size()), size = sixteen ? 2 : sixty_four ? 8 : 4;
    const char* unit = sixteen                                ? "16-bit floats"
                       : type == onnx::TensorProto::DOUBLE ? "doubles"
                       : type == onnx::TensorProto::FLOAT  ? "floats"
                                                           : "integers";
    check(bytes == n * size,
          what + " holds " + std::to_string(bytes) + " bytes for " + std::to_string(n) + " " + unit);
    return n;
  }
  const int64_t values = type == onnx::TensorProto::FLOAT    ? t.float_data_size()
                         : type == onnx::TensorProto::DOUBLE ? t.double_data_size()
                         : type == onnx::TensorProto::INT64  ? t.int64_data_size()
                                                             : t.int32_data_size();  // INT32, FLOAT16, BFLOAT16
  check(values == n, what + " holds " + std::to_string(values) + " values for " + std::to_string(n) + " elements");
  return n;
}

}  // namespace

std::string ints_string(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return "[" + s + "]";
}

bool is_float(const onnx::TensorProto& t) { return is_float_type(t.data_type()); }

bool is_float_type(int64_t type) {
  return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16 || type == onnx::TensorProto::DOUBLE;
}

namespace {
// IEEE half precision bits as a float (exact: every half is a float).
float half_to_float(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  float magnitude;
  if (exponent == 0x1F)
    magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

// bfloat16 bits: the high half of a float's.
float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The 16-bit values of a FLOAT16 or BFLOAT16 tensor: raw_data, or int32_data
// holding one value each (ONNX's encoding).
std::vector<uint16_t> sixteen_bit_values(const onnx::TensorProto& t, int64_t n, const std::string& what) {
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  if (t.has_raw_data()) {
    if (n > 0) std::memcpy(bits.data(), t.raw_data().data(), t.raw_data().size());
    return bits;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = t.int32_data(static_cast<int>(i));
    check(v >= 0 && v <= 0xFFFF, what + " holds a 16-bit float value outside 16 bits");
    bits[static_cast<size_t>(i)] = static_cast<uint16_t>(v);
  }
  return bits;
}

// A DOUBLE tensor's values as floats (rounded; beyond float's range: infinite).
void read_doubles(const onnx::TensorProto& t, int64_t n, std::vector<float>& out) {
  if (t.has_raw_data()) {
    for (int64_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, t.raw_data().data() + 8 * i, sizeof d);
      out[static_cast<size_t>(i)] = static_cast<float>(d);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<float>(t.double_data(static_cast<int>(i)));
}
}  // namespace

FloatTensor float_tensor(const onnx::TensorProto& t, const std::string& what) {
  check_internal(t, what);
  check(is_float(t), what + " is not a floating-point tensor (ONNX data type " + std::to_string(t.data_type()) +
                         "): octet imports float models; quantized ONNX models are not read");
  const int64_t n = stored_count(t, what);
  FloatTensor out(shape_of(t));
  if (t.data_type() == onnx::TensorProto::FLOAT16 || t.data_type() == onnx::TensorProto::BFLOAT16) {
    const bool half = t.data_type() == onnx::TensorProto::FLOAT16;
    const std::vector<uint16_t> bits = sixteen_bit_values(t, n, what);
    for (size_t i = 0; i < bits.size(); ++i) out.data[i] = half ? half_to_float(bits[i]) : bfloat16_to_float(bits[i]);
  } else if (t.data_type() == onnx::TensorProto::DOUBLE) {
    read_doubles(t, n, out.data);
  } else if (t.has_raw_data()) {
    // (memcpy only when there is something to copy: an empty vector's data() may be null.)
    if (n > 0) std::memcpy(out.data.data(), t.raw_data().data(), t.raw_data().size());
  } else {
    std::copy(t.float_data().begin(), t.float_data().end(), out.data.begin());
  }
  for (float v : out.data) check(std::isfinite(v), what + " holds NaN or infinite values");
  return out;
}

std::vector<int64_t> int_tensor(const onnx::TensorProto& t, const std::string& what) {
  check_internal(t, what);
  check(t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32,
        what + " is not an integer tensor (ONNX data type " + std::to_string(t.data_type()) + ")");
  const int64_t n = stored_count(t, what);
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      if (n > 0) std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());
    } else {
      std::copy(t.int64_data().begin(), t.int64_data().end(), out.begin());
    }
  } else if (t.has_raw_data()) {
    std::vector<int32_t> v(out.size());
    if (n > 0) std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
    std::copy(v.begin(), v.end(), out.begin());
  } else {
    std::copy(t.int32_data().begin(), t.int32_data().end(), out.begin());
  }
  return out;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = attribute(n, name);
  return a ? a->i() : fallback;
}

float float_attribute(const onnx::NodeProto& n, const std::string& name, float fallback) {
  const auto* a = attribute(n, name);
  return a ? a->f() : fallback;
}

std::vector<int64_t> ints_attribute(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> fallback) {
  const auto* a = attribute(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::string string_attribute(const onnx::NodeProto& n, const std::string& name, const std::string& fallback) {
  const auto* a = attribute(n, name);
  return a ? a->s() : fallback;
}

}  // namespace octet::onnx_import
