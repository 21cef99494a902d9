// A segmentation's masks as files: --eval-labels MASKS/ beside --eval-data
// IMAGES/, a folder of images, in subfolders or not (Pascal VOC's JPEGImages
// and SegmentationClass, ADE20K's images and annotations, Cityscapes'
// leftImg8bit and gtFine by city). IMAGES/SUB/NAME.jpg's mask is
// MASKS/SUB/NAME.png, or with suffixes (--image-suffix, --mask-suffix, as
// mmsegmentation's img_suffix and seg_map_suffix)
// IMAGES/SUB/NAME_leftImg8bit.png's is MASKS/SUB/NAME_gtFine_labelTrainIds.png:
// a PNG of class indices (data/images.h: decode_mask), the image's size,
// resized and cropped as the image is (--resize, --crop) but by nearest
// neighbour, as torchvision's segmentation references resize their targets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

// How an image's mask is named: the image's path under `images_dir` less `image_suffix` (its extension where
// empty), then `mask_suffix`, under `masks_dir`.
struct MaskNaming {
  std::string images_dir, masks_dir;
  std::string image_suffix;          // "": the image's extension
  std::string mask_suffix = ".png";  // "": .png
};

// The mask of `image_file` (a file under naming.images_dir); fails naming both when there is none, and naming the
// image where it does not end with the image suffix.
std::string mask_file_for(const std::string& image_file, const MaskNaming& naming);

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
