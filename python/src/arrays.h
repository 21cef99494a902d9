// numpy <-> octet conversions for the Python module. Input arrays are checked
// strictly (dtype, rank, shape) and refused with a message saying what was
// expected: a silent float64 -> float32 cast or a transposed image would give
// plausible but wrong logits.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "common/tensor.h"
#include "graph/graph.h"
#include "graph/layout.h"

namespace octet::python {

namespace py = pybind11;

// A batch of normalised images, N x C x H x W float32 matching `input`, as a
// C-contiguous array (a copy only when the given one is not contiguous).
// Raises TypeError for another dtype, ValueError for another shape, no images
// or values that are not finite.
py::array_t<float, py::array::c_style> image_batch(const py::handle& images, const ActShape& input);

// A uint8 N x C x H x W array of raw pixels (as load_dataset returns them).
py::array_t<uint8_t, py::array::c_style> pixel_batch(const py::handle& images);

// An int32 [N][classes] array of logits.
py::array_t<int32_t, py::array::c_style> logit_batch(const py::handle& logits, int64_t classes);

// Moves `values` into a new numpy array of the given shape without copying.
template <typename T>
py::array_t<T> to_numpy(std::vector<T> values, const std::vector<py::ssize_t>& shape) {
  auto* owner = new std::vector<T>(std::move(values));
  py::capsule release(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, owner->data(), release);
}

template <typename T>
py::array_t<T> to_numpy(const Tensor<T>& tensor) {
  return to_numpy(tensor.data, std::vector<py::ssize_t>(tensor.shape.begin(), tensor.shape.end()));
}

// The numpy shape of an activation: N x C x H x W, or N x F for a flat vector.
inline std::vector<py::ssize_t> activation_shape(int64_t batch, const ActShape& shape) {
  if (shape.h == 1 && shape.w == 1) return {batch, shape.c};
  return {batch, shape.c, shape.h, shape.w};
}

// "(3, 32, 32)": a shape as Python prints a tuple.
std::string shape_tuple(const std::vector<int64_t>& shape);

}  // namespace octet::python
