// libFuzzer target: a float ONNX model as `octet import model.onnx` reads it
// (interop/onnx_import.h): protobuf parsing, the opset (7 to 10: ONNX's
// checker and version converter first), the input, every node's attributes
// and constants, the graph it builds and its shapes.
#include <cstdint>

#include "interop/onnx_import.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = octet::fuzz::write_scratch(data, size, ".onnx");
  octet::fuzz::expect_clean([&] { octet::import_onnx(path, octet::OnnxImportOptions{"cifar10", {}, {}, {}}); });
  return 0;
}
