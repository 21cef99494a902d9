// libFuzzer target: the JPEG and PNG decoding of the user's image folders
// (data/images.h, libjpeg-turbo and libpng behind octet's error handling) as
// --calib-data and --eval-data read a file: decoded to RGB, resized and
// cropped as --preprocess does (to a few pixels, so that every image that
// decodes gets there), and decoded to grey; and as --eval-labels' masks do,
// to class indices, resized (nearest) and cropped. Of an image over a megapixel,
// which a few hundred bytes of JPEG can declare, only the RGB decoding runs:
// instrumented, the rest took 3.8 of the 5.2 s of a 291-byte JPEG of 19.5
// megapixels, and at octet's limit (179 megapixels) would pass libFuzzer's timeout.
#include <cstdint>

#include "data/images.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool small = false;
  octet::fuzz::expect_clean([&] {
    const octet::Image rgb = octet::decode_image(data, size, 3, "fuzz input");
    small = int64_t{rgb.height} * rgb.width <= int64_t{1} << 20;
    if (small) octet::center_crop(octet::resize_shorter_side(rgb, 6), 4);
  });
  if (!small) return 0;
  octet::fuzz::expect_clean([&] { octet::decode_image(data, size, 1, "fuzz input"); });
  octet::fuzz::expect_clean([&] {
    const octet::Image mask = octet::decode_mask(data, size, "fuzz input");
    octet::center_crop(octet::resize_shorter_side(mask, 6, octet::Resample::Nearest), 4, 255);
  });
  return 0;
}
