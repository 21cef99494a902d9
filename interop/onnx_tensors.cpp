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

}  // namespace

std::string ints_string(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return "[" + s + "]";
}

bool is_float(const onnx::TensorProto& t) { return t.data_type() == onnx::TensorProto::FLOAT; }

FloatTensor float_tensor(const onnx::TensorProto& t, const std::string& what) {
  check_internal(t, what);
  check(is_float(t), what + " is not float32 (ONNX data type " + std::to_string(t.data_type()) +
                         "): octet imports float models; quantized ONNX models are not read");
  const int64_t n = element_count(t, what);
  FloatTensor out(shape_of(t));
  // (memcpy only when there is something to copy: an empty vector's data() may be null.)
  if (t.has_raw_data()) {
    check(static_cast<int64_t>(t.raw_data().size()) == n * 4,
          what + " holds " + std::to_string(t.raw_data().size()) + " bytes for " + std::to_string(n) + " floats");
    if (n > 0) std::memcpy(out.data.data(), t.raw_data().data(), t.raw_data().size());
  } else {
    check(t.float_data_size() == n,
          what + " holds " + std::to_string(t.float_data_size()) + " values for " + std::to_string(n) + " elements");
    std::copy(t.float_data().begin(), t.float_data().end(), out.data.begin());
  }
  for (float v : out.data) check(std::isfinite(v), what + " holds NaN or infinite values");
  return out;
}

std::vector<int64_t> int_tensor(const onnx::TensorProto& t, const std::string& what) {
  check_internal(t, what);
  const int64_t n = element_count(t, what);
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      check(static_cast<int64_t>(t.raw_data().size()) == n * 8, what + " holds the wrong number of bytes");
      if (n > 0) std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());
    } else {
      check(t.int64_data_size() == n, what + " holds the wrong number of values");
      std::copy(t.int64_data().begin(), t.int64_data().end(), out.begin());
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.has_raw_data()) {
      check(static_cast<int64_t>(t.raw_data().size()) == n * 4, what + " holds the wrong number of bytes");
      std::vector<int32_t> v(out.size());
      if (n > 0) std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
      std::copy(v.begin(), v.end(), out.begin());
    } else {
      check(t.int32_data_size() == n, what + " holds the wrong number of values");
      std::copy(t.int32_data().begin(), t.int32_data().end(), out.begin());
    }
  } else {
    fail(what + " is not an integer tensor (ONNX data type " + std::to_string(t.data_type()) + ")");
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
