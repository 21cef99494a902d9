// Image classification datasets held in memory: the built-in ones (CIFAR-10,
// Fashion-MNIST, MNIST) as uint8 pixels (N x C x H x W, the layout of the
// CIFAR-10 binary files) with their labels; the user's own images
// (data/user_data.h) as pixels too, or as model inputs already normalised
// (a .npy of float32), with or without labels.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace octet {

enum class Split { Train, Test };

// What octet knows about a dataset it can read.
struct DatasetInfo {
  std::string name;  // "cifar10", "fashion-mnist", "mnist"
  int channels, height, width;
  std::vector<std::string> classes;
  std::vector<float> mean, std;  // per-channel normalisation of pixels scaled to [0, 1]
  std::string default_dir;       // where Debian puts it, or "" if there is no default
};

const DatasetInfo& dataset_info(const std::string& name);  // fails listing the known names
std::vector<std::string> dataset_names();
// `dir` if given, else the dataset's default folder; fails when neither exists.
std::string resolve_data_dir(const std::string& dataset, const std::string& dir);

// The checkpoint's dataset when its model came without one (octet import of
// an ONNX file without --dataset): its images are the user's own.
constexpr const char* kNoDataset = "none";

struct Dataset {
  std::string name;
  int channels = 0, height = 0, width = 0;
  int num_classes = 0;
  std::vector<uint8_t> images;  // N x C x H x W pixels; empty when `inputs` holds the images
  std::vector<float> inputs;    // N x C x H x W model inputs, already normalised (a .npy); else empty
  std::vector<int32_t> labels;  // N, in 0 .. num_classes - 1; empty: the images have no labels
  // Labels per image: 1, or a mask's H x W (a class per pixel, or kUnlabelledPixel: data/npy.h).
  int64_t label_height = 1, label_width = 1;
  std::vector<std::string> files;  // a folder's images: each image's file, in order (else empty)

  int64_t image_numel() const { return static_cast<int64_t>(channels) * height * width; }
  int64_t size() const {
    const int64_t numel = image_numel();
    if (numel == 0) return static_cast<int64_t>(labels.size()) / labels_per_image();
    return static_cast<int64_t>(inputs.empty() ? images.size() : inputs.size()) / numel;
  }
  bool labelled() const { return !labels.empty(); }
  int64_t labels_per_image() const { return label_height * label_width; }
  const uint8_t* image(int64_t i) const { return images.data() + i * image_numel(); }
};

// Loads a split from `dir`, the folder holding the dataset files themselves
// (the CIFAR-10 .bin files, or the IDX files, gzip-compressed or not).
Dataset load_dataset(const std::string& name, const std::string& dir, Split split);

// The images of a split at the indices `pick` chooses given the split's size,
// in that order. CIFAR-10 files are read record by record, so the split is
// never whole in memory; IDX files are read whole, then subset.
using IndexPicker = std::function<std::vector<int64_t>(int64_t split_size)>;
Dataset load_dataset_images(const std::string& name, const std::string& dir, Split split, const IndexPicker& pick);

// Readers, exposed for tests and for users with files of their own.
// CIFAR-10 binary version: records of 1 label byte + 3072 pixel bytes.
void read_cifar10_file(const std::string& path, Dataset* append_to);
int64_t cifar10_record_count(const std::string& path);  // checks the file's size
void read_cifar10_records(const std::string& path, const std::vector<int64_t>& records, Dataset* append_to);
// IDX (MNIST family): returns the dimensions and the raw bytes; gzip is detected.
std::vector<uint8_t> read_idx_file(const std::string& path, std::vector<int>* dims);

// Normalised float pixels, NCHW: (pixel / 255 - mean[c]) / std[c]; a dataset
// of `inputs` (already normalised) gives them as they are, mean and std unused.
std::vector<float> normalized_images(const Dataset& data, const std::vector<float>& mean, const std::vector<float>& std,
                                     const std::vector<int64_t>& indices);
std::vector<float> normalized_images(const Dataset& data, const std::vector<float>& mean, const std::vector<float>& std,
                                     int64_t first, int64_t count);

}  // namespace octet
