// octet.import_onnx: a float ONNX model as a checkpoint, as `octet import
// model.onnx` makes it (interop/onnx_import.h); where octet was built without
// the ONNX library it says so.
#include <pybind11/stl.h>

#include "common/error.h"
#include "python/src/handles.h"
#include "python/src/module.h"
#ifdef OCTET_HAVE_ONNX
#include "interop/onnx_import.h"
#endif

namespace octet::python {

namespace {
// input_size as OnnxImportOptions takes it: None, one integer (height and
// width; numpy's too), or (height, width).
std::vector<int> image_size(const py::object& size) {
  if (size.is_none()) return {};
  const char* wrong = "octet.import_onnx: input_size must be None, an int or (height, width)";
  try {
    if (!py::isinstance<py::sequence>(size)) return {size.cast<int>(), size.cast<int>()};
    check(!py::isinstance<py::str>(size) && py::len(size) == 2, wrong);
    return size.cast<std::vector<int>>();
  } catch (const py::cast_error&) {
    fail(wrong);
  }
}

std::shared_ptr<PyCheckpoint> import_onnx_py(const std::string& path, const std::string& dataset,
                                             const std::vector<float>& mean, const std::vector<float>& std,
                                             const py::object& input_size) {
  const std::vector<int> size = image_size(input_size);
#ifdef OCTET_HAVE_ONNX
  py::gil_scoped_release release;
  return std::make_shared<PyCheckpoint>(path, import_onnx(path, OnnxImportOptions{dataset, mean, std, size}));
#else
  (void)dataset, (void)mean, (void)std, (void)size;
  fail("octet.import_onnx('" + path + "') needs the ONNX library, and this octet was built without it: install it "
       "(Debian: apt-get install libonnx-dev) and build again");
#endif
}
}  // namespace

void bind_onnx_import(py::module_& m) {
  m.def("import_onnx", &import_onnx_py, py::arg("path"), py::kw_only(), py::arg("dataset") = "",
        py::arg("mean") = std::vector<float>{}, py::arg("std") = std::vector<float>{},
        py::arg("input_size") = py::none(),
        "A float ONNX model (opsets 7-27, its weights in the file or in external data beside it) as a "
        "checkpoint, as `octet import model.onnx` makes it: dataset (optional: 'cifar10', 'fashion-mnist'; "
        "the model must fit its images) gives the classes and the normalisation, else the classes are "
        "numbered and mean/std (default none) normalise the input. input_size (an int, or (height, width)) "
        "sizes an input whose height and width the file leaves dynamic (default: the dataset's). Save it with "
        "checkpoint.save(path), or use it directly (predict, octet.quantize).");
}

}  // namespace octet::python
