// The user's own images, for calibration and evaluation of any model (issue
// 40): a folder in torchvision's ImageFolder layout (one subfolder per class,
// JPEG or PNG files, decoded, resized and cropped as torchvision does) or of
// images alone, with an optional folder of their masks, or a .npy of model
// inputs already normalised (float32 N x C x H x W) with an optional .npy of
// labels. And where a command's images come from: the
// checkpoint's own dataset, or the user's images for either use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace octet {

// One set of the user's images.
struct ImageSource {
  std::string path;  // a folder (ImageFolder layout, or images alone) or a .npy (float32 N x C x H x W, normalised)
  // With a .npy of images: a .npy of labels, per image or masks (read_npy_labels); with a folder of images:
  // a folder of their PNG masks (data/folder_masks.h); "": none.
  std::string labels;
  // With a folder of masks: the end of an image's name its mask's replaces ("": the extension) and what replaces
  // it ("": .png); Cityscapes' _leftImg8bit.png and _gtFine_labelTrainIds.png.
  std::string image_suffix, mask_suffix;
  // With a folder: a text file naming the images to read, one per line (data/image_list.h: Pascal VOC's
  // ImageSets/Segmentation/val.txt), rather than every image of the folder; "": all.
  std::string list;
  int resize = 0;      // folder images: torchvision's Resize(resize) first, the shorter side (0: none)
  int crop = 0;        // then CenterCrop(crop) (0: none)

  bool empty() const { return path.empty(); }
  bool is_npy() const;  // a .npy file, by its name
};

// torchvision's ImageFolder listing of `root`: the class folders (every
// subfolder, sorted), and in each, walked down sorted as os.walk, the files
// named .jpg, .jpeg or .png (any case) with their class's index. A folder
// without subfolders lists its own images, sorted, without classes or labels
// (a segmentation's images, or any unlabelled ones). Fails naming the folder
// when it has neither class folders nor images or a class folder has no image, and
// naming the file for an image torchvision reads but octet does not (.bmp,
// .ppm, .pgm, .tif, .tiff, .webp). Other files are skipped, as torchvision does.
struct ImageFolderListing {
  std::vector<std::string> classes;
  std::vector<std::string> files;
  std::vector<int32_t> labels;
};
ImageFolderListing list_image_folder(const std::string& root);

// The images of `source`, a folder, as load_image_source reads them: those
// its list names (data/image_list.h), in its order; else with a folder of
// masks every image under the folder, subfolders too (Cityscapes' cities),
// sorted by path as os.walk, those whose names end with the image suffix where
// one is given; else list_image_folder's.
ImageFolderListing list_image_source(const ImageSource& source);

// What the images must fit: the model's dataset name, input and classes.
struct ModelInput {
  std::string dataset;  // a built-in dataset's name, or kNoDataset
  int channels = 0, height = 0, width = 0;
  int classes = 0;
};

// Loads the images `pick` chooses (nullptr: all, in order) of `source` as
// the model's inputs. With `labels`, a folder of class folders must hold one
// per class of the model (labels: the sorted position, as torchvision), a
// folder of images alone gives its masks' labels and a .npy of images its
// labels file, if given; without, no labels are kept. Fails
// naming the file whose images do not fit the model, with both shapes.
Dataset load_image_source(const ImageSource& source, const ModelInput& model, bool labels,
                          const IndexPicker& pick = nullptr);

// Where a command's images come from: the checkpoint's dataset in `dir` (""
// its default folder), except for a use whose ImageSource is given.
struct DataOptions {
  std::string dir;
  ImageSource calib;  // calibration images (else the dataset's training split)
  ImageSource eval;   // evaluation images (else the dataset's test split)

  DataOptions(std::string dataset_dir = "") : dir(std::move(dataset_dir)) {}  // NOLINT: a dataset folder is the usual case
};

// Calibration images (no labels) at the indices `pick` chooses.
Dataset load_calibration_images(const ModelInput& model, const DataOptions& data, const IndexPicker& pick);
// The same images with the dataset's labels (the user's calibration images
// without): a validation split of the calibration source (quantize --min-agreement).
Dataset load_validation_images(const ModelInput& model, const DataOptions& data, const IndexPicker& pick);
// Evaluation images with their labels where they have them: the first
// `limit` (0: all).
Dataset load_evaluation_images(const ModelInput& model, const DataOptions& data, int64_t limit = 0);

// "3x224x224"
std::string image_shape_text(int channels, int height, int width);

}  // namespace octet
