// The parts of the `octet._octet` extension, each registering its functions
// and classes on the module.
#pragma once

#include <pybind11/pybind11.h>

namespace octet::python {

void bind_models(pybind11::module_& m);  // checkpoints, quantized models, quantize, evaluate
void bind_data(pybind11::module_& m);    // datasets

}  // namespace octet::python
