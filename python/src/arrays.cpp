#include "python/src/arrays.h"

#include <cmath>

namespace octet::python {

namespace {
std::string type_name(const py::handle& object) { return py::str(py::type::of(object).attr("__name__")); }

py::array as_array(const py::handle& object, const std::string& what, const std::string& expected) {
  if (!py::isinstance<py::array>(object))
    throw py::type_error(what + " must be a numpy array (" + expected + "), got " + type_name(object));
  return py::reinterpret_borrow<py::array>(object);
}

std::vector<int64_t> shape_of(const py::array& a) { return std::vector<int64_t>(a.shape(), a.shape() + a.ndim()); }

template <typename T>
void check_dtype(const py::array& a, const std::string& what, const std::string& expected, const char* convert) {
  if (!a.dtype().is(py::dtype::of<T>()))
    throw py::type_error(what + " must be " + expected + ", got dtype " + std::string(py::str(a.dtype())) +
                         " (convert with " + convert + ")");
}
}  // namespace

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

py::array_t<float, py::array::c_style> image_batch(const py::handle& images, const ActShape& input) {
  const std::string expected = "float32, N x C x H x W = N x " + std::to_string(input.c) + " x " +
                               std::to_string(input.h) + " x " + std::to_string(input.w) + ", normalised";
  const py::array a = as_array(images, "images", expected);
  check_dtype<float>(a, "images", "float32", "images.astype(numpy.float32)");
  std::vector<int64_t> shape = shape_of(a);
  // A 1-D model's inputs, N x C x L, are its images of C x 1 x L (the same values in the same order).
  const bool one_row = shape.size() == 3 && input.h == 1 && shape[1] == input.c && shape[2] == input.w;
  if (one_row) shape.insert(shape.begin() + 2, 1);
  if (shape.size() != 4 || shape[1] != input.c || shape[2] != input.h || shape[3] != input.w)
    throw py::value_error("images have shape " + shape_tuple(shape) + " but the model takes " +
                          "(N, " + std::to_string(input.c) + ", " +
                          std::to_string(input.h) + ", " + std::to_string(input.w) + ")" +
                          " (N x C x H x W; add a batch axis with images[None] for one image)");
  if (shape[0] == 0) throw py::value_error("images hold no image (N = 0)");
  auto contiguous = py::array_t<float, py::array::c_style>::ensure(one_row ? py::array(a).reshape(shape) : a);
  const float* x = contiguous.data();
  for (py::ssize_t i = 0; i < contiguous.size(); ++i)
    if (!std::isfinite(x[i]))
      throw py::value_error("images contain NaN or infinite values (first at flat index " + std::to_string(i) + ")");
  return contiguous;
}

py::array_t<uint8_t, py::array::c_style> pixel_batch(const py::handle& images) {
  const py::array a = as_array(images, "images", "uint8 pixels, N x C x H x W");
  check_dtype<uint8_t>(a, "images", "uint8 pixels (0..255)", "images.astype(numpy.uint8)");
  if (a.ndim() != 4)
    throw py::value_error("images have shape " + shape_tuple(shape_of(a)) + ", expected N x C x H x W");
  return py::array_t<uint8_t, py::array::c_style>::ensure(a);
}

py::array_t<int32_t, py::array::c_style> logit_batch(const py::handle& logits, int64_t classes) {
  const py::array a = as_array(logits, "logits", "int32, N x classes");
  check_dtype<int32_t>(a, "logits", "int32 (the int8 model's predict output)", "logits.astype(numpy.int32)");
  if (a.ndim() != 2 || a.shape(1) != classes)
    throw py::value_error("logits have shape " + shape_tuple(shape_of(a)) + ", expected (N, " +
                          std::to_string(classes) + ")");
  return py::array_t<int32_t, py::array::c_style>::ensure(a);
}

}  // namespace octet::python
