// A minimal owning tensor: a shape and a contiguous row-major buffer. The
// torch-free parts of octet (graph, calibration, quantization, runtime) pass
// weights and activations around in this form.
#pragma once

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace octet {

using Shape = std::vector<int64_t>;

inline int64_t shape_numel(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

std::string shape_string(const Shape& shape);

template <typename T>
struct Tensor {
  using value_type = T;
  Shape shape;
  std::vector<T> data;

  Tensor() = default;
  explicit Tensor(Shape s, T fill = T{}) : shape(std::move(s)), data(static_cast<size_t>(shape_numel(shape)), fill) {}
  Tensor(Shape s, std::vector<T> values) : shape(std::move(s)), data(std::move(values)) {}

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim(size_t i) const { return shape.at(i); }
  T* ptr() { return data.data(); }
  const T* ptr() const { return data.data(); }
};

using FloatTensor = Tensor<float>;
using Int8Tensor = Tensor<int8_t>;
using Int32Tensor = Tensor<int32_t>;

}  // namespace octet
