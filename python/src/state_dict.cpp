// PyTorch weights in: the compiled half of octet.from_torch (python/octet/
// torch_weights.py turns a module or state_dict into float32 numpy arrays
// without octet needing torch) and Checkpoint.save.
#include <pybind11/stl.h>

#include "models/state_dict_mapping.h"
#include "python/src/arrays.h"
#include "python/src/handles.h"
#include "python/src/module.h"

namespace octet::python {

namespace {

FloatTensor float_tensor(const std::string& name, const py::handle& value) {
  if (!py::isinstance<py::array>(value))
    throw py::type_error("state_dict['" + name + "'] must be a numpy array, got " +
                         std::string(py::str(py::type::of(value).attr("__name__"))));
  const auto array = py::reinterpret_borrow<py::array>(value);
  if (array.dtype().kind() != 'f')
    throw py::type_error("state_dict['" + name + "'] must hold floating-point values, got dtype " +
                         std::string(py::str(array.dtype())));
  const auto floats = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  FloatTensor tensor(Shape(floats.shape(), floats.shape() + floats.ndim()));
  std::copy(floats.data(), floats.data() + floats.size(), tensor.data.begin());
  return tensor;
}

std::shared_ptr<PyCheckpoint> checkpoint_from_state_dict(const py::dict& state_dict, const std::string& model,
                                                         const std::string& dataset, bool batch_norm,
                                                         const std::vector<float>& mean,
                                                         const std::vector<float>& std, const std::string& source) {
  std::map<std::string, FloatTensor> tensors;
  for (const auto& [key, value] : state_dict) {
    const std::string name = py::str(key);
    tensors[name] = float_tensor(name, value);
  }
  py::gil_scoped_release release;
  return std::make_shared<PyCheckpoint>(
      "", checkpoint_from_torch(tensors, TorchImportOptions{model, dataset, batch_norm, mean, std, source}));
}

}  // namespace

void bind_state_dict(py::module_& m) {
  m.def("checkpoint_from_state_dict", &checkpoint_from_state_dict, py::arg("state_dict"), py::arg("model"),
        py::arg("dataset"), py::arg("batch_norm") = true, py::arg("mean") = std::vector<float>{},
        py::arg("std") = std::vector<float>{}, py::arg("source") = "",
        "A float checkpoint from a dict of float numpy arrays named as in a PyTorch state_dict "
        "(use octet.from_torch).");
}

}  // namespace octet::python
