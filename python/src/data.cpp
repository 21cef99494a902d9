// Datasets for Python: the readers octet trains and calibrates with, giving
// numpy arrays of raw pixels (the built-in datasets and the user's image
// folders), and the normalisation the models expect.
#include <pybind11/stl.h>

#include <optional>

#include "common/error.h"
#include "data/dataset.h"
#include "data/images.h"
#include "data/npy.h"
#include "data/user_data.h"
#include "python/src/arrays.h"
#include "python/src/module.h"
#include "python/src/user_images.h"

namespace octet::python {

namespace {

Split split_from_name(const std::string& split) {
  check(split == "train" || split == "test", "split must be 'train' or 'test', got '" + split + "'");
  return split == "train" ? Split::Train : Split::Test;
}

py::dict info_dict(const std::string& name) {
  const DatasetInfo& info = dataset_info(name);
  py::dict d;
  d["name"] = info.name;
  d["shape"] = py::make_tuple(info.channels, info.height, info.width);
  d["classes"] = info.classes;
  d["mean"] = info.mean;
  d["std"] = info.std;
  d["default_dir"] = info.default_dir.empty() ? py::object(py::none()) : py::object(py::str(info.default_dir));
  return d;
}

py::tuple load_dataset_py(const std::string& name, const std::optional<std::string>& data_dir,
                          const std::string& split) {
  Dataset data;
  {
    py::gil_scoped_release release;
    data = load_dataset(name, resolve_data_dir(name, data_dir.value_or("")), split_from_name(split));
  }
  const int64_t n = data.size();
  std::vector<uint8_t> labels(data.labels.begin(), data.labels.end());  // the built-in datasets have 10 classes
  return py::make_tuple(to_numpy(std::move(data.images), {n, data.channels, data.height, data.width}),
                        to_numpy(std::move(labels), {n}));
}

// An ImageFolder folder as the command line reads it, the images' size from
// the first (after resize and crop): (uint8 images, int64 labels, classes);
// a folder of images alone: (images, None, []), or with `masks` their masks as
// labels (int64 N x H x W, 255 where a pixel has none, as --eval-labels reads them).
py::tuple load_image_folder_py(const std::string& path, int channels, int resize, int crop,
                               const std::optional<std::string>& masks, const std::optional<std::string>& names,
                               const std::string& image_suffix, const std::string& mask_suffix) {
  ImageSource source;
  source.path = path;
  source.labels = masks.value_or("");
  source.list = names.value_or("");
  set_mask_suffixes(&source, image_suffix, mask_suffix);
  source.resize = resize;
  source.crop = crop;
  Dataset data;
  std::vector<std::string> classes;
  {
    py::gil_scoped_release release;
    const ImageFolderListing listing = list_image_source(source);
    Image first = read_image_file(listing.files[0], channels);
    if (resize > 0) first = resize_shorter_side(first, resize);
    if (crop > 0) first = center_crop(first, crop);
    // Masks: any class up to 254, 255 none (marks_unlabelled_pixel).
    const int classes_read = masks ? 255 : static_cast<int>(listing.classes.size());
    data = load_image_source(source, ModelInput{kNoDataset, channels, first.height, first.width, classes_read}, true);
    classes = listing.classes;
  }
  const int64_t n = data.size();
  std::vector<int64_t> labels(data.labels.begin(), data.labels.end());
  py::object label_array = py::none();
  if (!classes.empty()) label_array = to_numpy(std::move(labels), {n});
  if (masks) {
    for (int64_t& label : labels) label = label == kUnlabelledPixel ? 255 : label;
    label_array = to_numpy(std::move(labels), {n, data.label_height, data.label_width});
  }
  return py::make_tuple(to_numpy(std::move(data.images), {n, data.channels, data.height, data.width}), label_array,
                        classes);
}

py::array_t<float> normalize(const py::handle& images, const std::vector<float>& mean, const std::vector<float>& std) {
  const auto pixels = pixel_batch(images);
  const int64_t channels = pixels.shape(1);
  if (static_cast<int64_t>(mean.size()) != channels || static_cast<int64_t>(std.size()) != channels)
    throw py::value_error("images have " + std::to_string(channels) + " channels but mean has " +
                          std::to_string(mean.size()) + " values and std " + std::to_string(std.size()));
  for (float s : std)
    if (!(s > 0)) throw py::value_error("std values must be positive, got " + std::to_string(s));
  Dataset data;
  data.channels = static_cast<int>(channels);
  data.height = static_cast<int>(pixels.shape(2));
  data.width = static_cast<int>(pixels.shape(3));
  data.images.assign(pixels.data(), pixels.data() + pixels.size());
  data.labels.resize(static_cast<size_t>(pixels.shape(0)));
  std::vector<float> x = normalized_images(data, mean, std, 0, data.size());
  return to_numpy(std::move(x), {pixels.shape(0), pixels.shape(1), pixels.shape(2), pixels.shape(3)});
}

}  // namespace

void bind_data(py::module_& m) {
  m.def("datasets", &dataset_names, "Names of the datasets octet reads.");
  m.def("dataset_info", &info_dict, py::arg("name"),
        "What octet knows about a dataset: shape (C, H, W), classes, mean, std, default_dir.");
  m.def("load_dataset", &load_dataset_py, py::arg("name"), py::arg("data_dir") = py::none(),
        py::arg("split") = "test",
        "Loads a split ('train' or 'test') as (images, labels): uint8 pixels N x C x H x W and uint8 labels N. "
        "data_dir: the folder holding the files (CIFAR-10 .bin files, or the IDX files); default: the dataset's "
        "Debian folder.");
  m.def("load_image_folder", &load_image_folder_py, py::arg("path"), py::arg("channels") = 3, py::arg("resize") = 0,
        py::arg("crop") = 0, py::arg("masks") = py::none(), py::arg("names") = py::none(),
        py::arg("image_suffix") = "", py::arg("mask_suffix") = "",
        "Reads a folder in torchvision's ImageFolder layout (one subfolder per class, JPEG or PNG files) as the "
        "command line's --calib-data/--eval-data do: (uint8 images N x C x H x W, int64 labels N, classes); a "
        "folder of images without subfolders, sorted by name: (images, None, []), or with masks (a folder of their "
        "PNG masks, as --eval-labels) (images, int64 masks N x H x W resized and cropped as the images by nearest "
        "neighbour, 255 where a pixel has no label, []); names: a text file naming the images of the folder to "
        "read, one per line (NAME or NAME.ext), in its order, as --eval-list and Pascal VOC's ImageSets; with masks, "
        "the images of subfolders too, and image_suffix, mask_suffix as --image-suffix, --mask-suffix. "
        "channels: 3 (RGB) or 1 (grey, as PIL's convert('L')); resize: the shorter side to N first, bilinear as "
        "torchvision's Resize(N); crop: then the centre N x N, as CenterCrop(N). Every image must then have the "
        "first one's size.");
  m.def("normalize", &normalize, py::arg("images"), py::arg("mean"), py::arg("std"),
        "uint8 pixels N x C x H x W -> float32 model input (pixel / 255 - mean[c]) / std[c], computed as octet "
        "computes it (so logits match the command line's bit for bit).");
}

}  // namespace octet::python
