// Image files as torchvision's ImageFolder reads them for a model (PIL's
// Image.open(...).convert("RGB"), then Resize and CenterCrop): JPEG and PNG
// decoded with libjpeg-turbo and libpng to 8-bit pixels, converted as PIL's
// convert() does, resized with PIL's bilinear filter (antialiased when it
// shrinks) bit for bit, and cropped at the centre as torchvision does.
// Refusals name the file. Built without libpng or libjpeg (both found by
// CMake or neither used), decoding fails saying so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

struct Image {
  int channels = 0, height = 0, width = 0;
  std::vector<uint8_t> pixels;  // C x H x W (planar)
};

// "" when this build decodes JPEG and PNG files, else why not.
std::string image_files_missing();

// A JPEG or PNG file's bytes (recognised by their first bytes, not the name)
// as `channels` channels: 3, RGB (grey replicated, as convert("RGB")), or 1,
// grey (colour as convert("L"): (19595 R + 38470 G + 7471 B + 2^15) >> 16).
// Alpha and PNG transparency are dropped, 16-bit PNG samples keep their high
// byte, CMYK JPEGs are refused. `name` names the file in messages.
Image decode_image(const uint8_t* bytes, size_t size, int channels, const std::string& name);
Image read_image_file(const std::string& path, int channels);

// A segmentation mask's PNG as class indices, one channel: a palette PNG's
// indices (Pascal VOC's masks; not its colours: what numpy.array(PIL.Image.open())
// gives) or an 8-bit greyscale PNG's values (Cityscapes', ADE20K's). Refused,
// naming the file: JPEG (its lossy compression changes indices), colour, grey
// with alpha, 16-bit and 1-, 2- or 4-bit greyscale PNGs.
Image decode_mask(const uint8_t* bytes, size_t size, const std::string& name);
Image read_mask_file(const std::string& path);

// PIL's Image.resize((width, height), Image.BILINEAR) on 8-bit pixels.
Image resize_bilinear(const Image& image, int height, int width);
// PIL's Image.resize((width, height), Image.NEAREST): a mask's resampling.
Image resize_nearest(const Image& image, int height, int width);

enum class Resample { Bilinear, Nearest };

// torchvision's Resize(size) (an int): the shorter side becomes `size`, the
// longer int(size * long / short); unchanged when it is already so.
Image resize_shorter_side(const Image& image, int size, Resample resample = Resample::Bilinear);

// torchvision's CenterCrop(size): the size x size square at top
// round((H - size) / 2), left round((W - size) / 2) (Python's round: halves
// to even); an image smaller than `size` is padded with `fill` first (zeros,
// as torchvision pads it).
Image center_crop(const Image& image, int size, uint8_t fill = 0);

}  // namespace octet
