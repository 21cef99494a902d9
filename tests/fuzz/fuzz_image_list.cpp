// libFuzzer target: the list of image names (data/image_list.h) as
// --eval-list and --calib-list reach it: parsed, then each name looked up in
// the scratch file's folder (names that resolve to files are found, the rest
// refused naming their line).
#include <cstdint>
#include <string>

#include "data/image_list.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = octet::fuzz::write_scratch(data, size, ".txt");
  const std::string folder = path.substr(0, path.rfind('/'));
  octet::fuzz::expect_clean([&] { octet::images_named_in(path, folder); });
  return 0;
}
