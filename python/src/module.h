// The parts of the `octet._octet` extension, each registering its functions
// and classes on the module.
#pragma once

#include <pybind11/pybind11.h>

namespace octet::python {

namespace py = pybind11;

void bind_checkpoint(py::module_& m);  // float checkpoints
void bind_quantized(py::module_& m);   // quantized models and the backends
void bind_quantize(py::module_& m);    // octet.quantize and its calibration statistics
void bind_evaluate(py::module_& m);    // octet.evaluate
void bind_data(py::module_& m);        // datasets
void bind_state_dict(py::module_& m);  // PyTorch weights in (octet.from_torch)
void bind_onnx_import(py::module_& m);  // ONNX models in (octet.import_onnx)

}  // namespace octet::python
