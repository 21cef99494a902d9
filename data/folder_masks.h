// A segmentation's masks as files: --eval-labels MASKS/ beside --eval-data
// IMAGES/, a folder of images without class folders (Pascal VOC's
// JPEGImages and SegmentationClass, Cityscapes' and ADE20K's layouts once
// their images share a folder). IMAGES/NAME.jpg's mask is MASKS/NAME.png: a
// PNG of class indices (data/images.h: decode_mask), the image's size, resized
// and cropped as the image is (--resize, --crop) but by nearest neighbour, as
// torchvision's segmentation references resize their targets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

// MASKS/NAME.png for IMAGES/NAME.ext; fails naming both when there is none.
std::string mask_file_for(const std::string& image_file, const std::string& masks_dir);

// How the image that a mask goes with became the model's input.
struct MaskGeometry {
  int image_height = 0, image_width = 0;  // the image as decoded
  int resize = 0, crop = 0;               // --resize, --crop (0: none)
};

// The mask `mask_file` of `image_file` as labels of a model of `classes`
// classes, row by row: resized and cropped as the image (nearest neighbour;
// what the crop pads beyond the image is 255, no label), each value a class,
// or 255 (unless classes > 255) kUnlabelledPixel (data/npy.h). Fails naming
// the file: a mask of another size than its image, a value that is no class
// (with its row and column).
std::vector<int32_t> folder_mask_labels(const std::string& mask_file, const std::string& image_file,
                                        const MaskGeometry& geometry, int64_t classes);

}  // namespace octet
