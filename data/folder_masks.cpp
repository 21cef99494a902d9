#include "data/folder_masks.h"

#include "common/error.h"
#include "common/file_io.h"
#include "common/strings.h"
#include "data/images.h"
#include "data/npy.h"

namespace octet {

std::string mask_file_for(const std::string& image_file, const MaskNaming& naming) {
  const std::string root = naming.images_dir + "/";
  std::string name = image_file.compare(0, root.size(), root) == 0 ? image_file.substr(root.size()) : image_file;
  const std::string& suffix = naming.image_suffix;
  if (!suffix.empty()) {
    check(ends_after(name, suffix),
          image_file + ": does not end with --image-suffix '" + suffix + "' (its mask's name is the image's less it)");
    name.resize(name.size() - suffix.size());
  } else {
    const size_t dot = name.find_last_of('.'), slash = name.find_last_of('/');
    if (dot != std::string::npos && dot > 0 && (slash == std::string::npos || dot > slash + 1)) name.resize(dot);
  }
  const std::string mask = naming.masks_dir + "/" + name + (naming.mask_suffix.empty() ? ".png" : naming.mask_suffix);
  check(file_exists(mask), image_file + ": no mask " + mask +
                               " (each image of --eval-data needs its mask in --eval-labels' folder: the image's "
                               "name and subfolders, less its extension or --image-suffix, then .png or "
                               "--mask-suffix)");
  return mask;
}

std::vector<int32_t> folder_mask_labels(const std::string& mask_file, const std::string& image_file,
                                        const MaskGeometry& geometry, int64_t classes) {
  Image mask = read_mask_file(mask_file);
  check(mask.height == geometry.image_height && mask.width == geometry.image_width,
        mask_file + ": a mask of " + std::to_string(mask.width) + "x" + std::to_string(mask.height) + " pixels for " +
            image_file + ", an image of " + std::to_string(geometry.image_width) + "x" +
            std::to_string(geometry.image_height) + " (width x height): a mask is its image's size");
  constexpr uint8_t kUnlabelledByte = 255;
  if (geometry.resize > 0) mask = resize_shorter_side(mask, geometry.resize, Resample::Nearest);
  if (geometry.crop > 0) mask = center_crop(mask, geometry.crop, kUnlabelledByte);
  std::vector<int32_t> labels(mask.pixels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    const int value = mask.pixels[i];
    if (marks_unlabelled_pixel(value, classes)) {
      labels[i] = kUnlabelledPixel;
      continue;
    }
    if (value >= classes)
      fail(mask_file + ": pixel (row " + std::to_string(i / static_cast<size_t>(mask.width)) + ", column " +
           std::to_string(i % static_cast<size_t>(mask.width)) + (geometry.resize > 0 || geometry.crop > 0
                                                                      ? ", after --resize/--crop" : "") +
           ") is " + std::to_string(value) + label_range_text(classes, true));
    labels[i] = value;
  }
  return labels;
}

}  // namespace octet
