// libFuzzer target: the .npy reader (data/npy.h) as the user's images and
// labels reach it (data/user_data.h): the header, then images for a model of
// the shape the header names (so that shapes that fit get read too), then
// the same file as labels.
#include <cstdint>
#include <vector>

#include "data/npy.h"
#include "data/user_data.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = octet::fuzz::write_scratch(data, size, ".npy");
  octet::fuzz::expect_clean([&] {
    const octet::NpyHeader header = octet::read_npy_header(path);
    octet::ModelInput model{octet::kNoDataset, 3, 2, 2, 10};
    if (header.shape.size() == 4 && header.shape[1] < 64 && header.shape[2] < 64 && header.shape[3] < 64) {
      model.channels = static_cast<int>(header.shape[1]);
      model.height = static_cast<int>(header.shape[2]);
      model.width = static_cast<int>(header.shape[3]);
    }
    octet::ImageSource source;
    source.path = path;
    octet::load_image_source(source, model, false);
    octet::load_image_source(source, model, false, [](int64_t n) { return std::vector<int64_t>{n - 1, 0}; });
  });
  octet::fuzz::expect_clean([&] { octet::read_npy_labels(path, 10); });
  return 0;
}
