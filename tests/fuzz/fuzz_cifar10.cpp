// libFuzzer target: the CIFAR-10 binary batch reader (data/readers.cpp).
#include <cstdint>

#include "data/dataset.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = octet::fuzz::write_scratch(data, size, ".bin");
  octet::fuzz::expect_clean([&] {
    octet::Dataset dataset;
    octet::read_cifar10_file(path, &dataset);
  });
  return 0;
}
