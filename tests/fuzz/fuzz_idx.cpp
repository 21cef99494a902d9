// libFuzzer target: the IDX reader (data/readers.cpp), plain and gzip.
#include <cstdint>
#include <vector>

#include "data/dataset.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = octet::fuzz::write_scratch(data, size, "-idx-ubyte");
  octet::fuzz::expect_clean([&] {
    std::vector<int> dims;
    octet::read_idx_file(path, &dims);
  });
  return 0;
}
