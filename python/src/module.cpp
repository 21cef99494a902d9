// `octet._octet`: the compiled half of the Python package `octet`.
#include <pybind11/pybind11.h>

#include "common/error.h"
#include "common/memory_policy.h"
#include "python/src/module.h"

PYBIND11_MODULE(_octet, m) {
  m.doc() = "octet: int8 quantization toolkit and int8 inference runtime (compiled part; import octet)";
  m.attr("__version__") = OCTET_VERSION;
  // Every failure octet reports (a missing file, an unknown option, a model
  // that does not fit the data) arrives as octet.Error with octet's message.
  octet::keep_freed_memory_for_reuse();
  pybind11::register_exception<octet::Error>(m, "Error", PyExc_RuntimeError);
  octet::python::bind_checkpoint(m);
  octet::python::bind_quantized(m);
  octet::python::bind_quantize(m);
  octet::python::bind_evaluate(m);
  octet::python::bind_data(m);
  octet::python::bind_state_dict(m);
  octet::python::bind_onnx_import(m);
}
