// libFuzzer target: the safetensors container parser (common/safetensors.cpp)
// and the typed accessors every loader uses on its result.
#include <cstdint>
#include <vector>

#include "common/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  octet::fuzz::expect_clean([&] {
    const octet::TensorFile file = octet::TensorFile::parse(std::vector<uint8_t>(data, data + size), "<fuzz>");
    for (const auto& entry : file.tensors()) {
      const std::string& name = entry.first;
      octet::fuzz::expect_clean([&] {
        switch (entry.second.dtype) {
          case octet::DType::F32: file.get<float>(name); break;
          case octet::DType::I32: file.get<int32_t>(name); break;
          case octet::DType::I8: file.get<int8_t>(name); break;
          case octet::DType::U8: file.get<uint8_t>(name); break;
        }
      });
    }
    file.check_format("octet-checkpoint", 1, "checkpoint");
  });
  return 0;
}
