#include "data/user_data.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <utility>

#include "common/error.h"
#include "common/file_io.h"
#include "common/strings.h"
#include "data/folder_masks.h"
#include "data/image_list.h"
#include "data/images.h"
#include "data/npy.h"

namespace octet {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}


// 1: an image octet reads; -1: one torchvision reads and octet does not; 0: not an image.
int image_kind(const std::string& name) {
  const std::string l = lower(name);
  for (const char* ext : {".jpg", ".jpeg", ".png"})
    if (ends_with(l, ext)) return 1;
  for (const char* ext : {".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"})
    if (ends_with(l, ext)) return -1;
  return 0;
}

// Every folder under `dir` (itself included) with its image files, as
// os.walk(dir, followlinks=True) finds them; `depth` guards against link cycles.
void walk(const std::string& dir, int depth, std::vector<std::pair<std::string, std::vector<std::string>>>* out) {
  check(depth < 32, dir + ": folders nested more than 32 deep (a cycle of links?)");
  std::vector<std::string> images;
  for (const std::string& name : list_directory(dir)) {
    const std::string path = dir + "/" + name;
    if (directory_exists(path)) {
      walk(path, depth + 1, out);
      continue;
    }
    const int kind = image_kind(name);
    check(kind >= 0, path + ": octet reads JPEG and PNG images only (convert it, or remove it from the folder)");
    if (kind == 1 && file_exists(path)) images.push_back(path);
  }
  out->emplace_back(dir, std::move(images));
}

// The images under `dir`, its subfolders too, in os.walk's order sorted by folder path.
std::vector<std::string> images_under(const std::string& dir) {
  std::vector<std::pair<std::string, std::vector<std::string>>> folders;
  walk(dir, 0, &folders);
  std::sort(folders.begin(), folders.end());
  std::vector<std::string> files;
  for (const auto& folder : folders) files.insert(files.end(), folder.second.begin(), folder.second.end());
  return files;
}

std::string shape_of(const Image& image) { return image_shape_text(image.channels, image.height, image.width); }

// One folder image as the model's input: decoded, resized, cropped, checked
// (`first`: the first image as decoded, for the message on mixed sizes); its
// size as decoded into `decoded_size` (height, width).
Image folder_image(const std::string& path, const ImageSource& source, const ModelInput& model, const Image& first,
                   std::pair<int, int>* decoded_size) {
  Image image = read_image_file(path, model.channels);
  *decoded_size = {image.height, image.width};
  const std::string decoded = shape_of(image);
  const bool mixed = image.height != first.height || image.width != first.width;
  if (source.resize > 0) image = resize_shorter_side(image, source.resize);
  if (source.crop > 0) image = center_crop(image, source.crop);
  if (image.height == model.height && image.width == model.width) return image;
  const std::string expected = image_shape_text(model.channels, model.height, model.width);
  std::string why = path + ": an image of " + decoded;
  if (source.resize > 0 || source.crop > 0) why += ", " + shape_of(image) + " after --resize/--crop,";
  why += " and the model takes " + expected;
  if (mixed) why += " (the images differ in size: the first was " + shape_of(first) + ")";
  const std::string example = "--resize " + std::to_string(std::min(model.height, model.width)) + " --crop " +
                              std::to_string(model.height);
  fail(why + (source.resize > 0 || source.crop > 0 ? ": --resize and --crop must give the model's size (e.g. "
                                                   : ": pass --resize and --crop (e.g. ") +
       example + ")");
}

// Decodes `files` in parallel into `data->images`, and `with_masks` their
// masks (source.labels) into `data->labels`; the first failure in file order is reported.
void decode_folder_images(const std::vector<std::string>& files, const ImageSource& source, const ModelInput& model,
                          bool with_masks, Dataset* data) {
  const size_t numel = static_cast<size_t>(data->image_numel());
  data->images.assign(files.size() * numel, 0);
  const MaskNaming naming{source.path, source.labels, source.image_suffix, source.mask_suffix};
  if (with_masks) {
    data->label_height = model.height, data->label_width = model.width;
    data->labels.assign(files.size() * static_cast<size_t>(data->labels_per_image()), 0);
  }
  std::vector<std::exception_ptr> errors(files.size());
  const Image first = read_image_file(files.at(0), model.channels);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      try {
        std::pair<int, int> decoded;
        const Image image = folder_image(files[i], source, model, first, &decoded);
        std::copy(image.pixels.begin(), image.pixels.end(), data->images.begin() + static_cast<std::ptrdiff_t>(i * numel));
        if (!with_masks) continue;
        const MaskGeometry geometry{decoded.first, decoded.second, source.resize, source.crop};
        const std::vector<int32_t> mask =
            folder_mask_labels(mask_file_for(files[i], naming), files[i], geometry, model.classes);
        std::copy(mask.begin(), mask.end(), data->labels.begin() + static_cast<std::ptrdiff_t>(i * mask.size()));
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t threads = std::min<size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

std::vector<int64_t> picked(const IndexPicker& pick, int64_t size, const std::string& what) {
  std::vector<int64_t> indices;
  if (pick) {
    indices = pick(size);
  } else {
    for (int64_t i = 0; i < size; ++i) indices.push_back(i);
  }
  for (int64_t i : indices)
    if (i < 0 || i >= size)
      fail(what + ": image index " + std::to_string(i) + " out of range (" + std::to_string(size) + " images)");
  check(!indices.empty(), what + ": no images were picked");
  return indices;
}

Dataset load_folder(const ImageSource& source, const ModelInput& model, bool labels, const IndexPicker& pick,
                    Dataset data) {
  check(source.labels.empty() || directory_exists(source.labels),
        source.labels + ": with a folder of images, --eval-labels is a folder of PNG masks (a .npy of labels goes "
                        "with a .npy of images)");
  const ImageFolderListing listing = list_image_source(source);
  const bool classes = !listing.classes.empty();
  if (labels && classes)
    check(static_cast<int>(listing.classes.size()) == model.classes,
          source.path + ": " + std::to_string(listing.classes.size()) + " class folders, and the model has " +
              std::to_string(model.classes) + " classes (the labels are the folders' sorted positions, as "
              "torchvision's ImageFolder gives them)");
  std::vector<std::string> files;
  for (int64_t i : picked(pick, static_cast<int64_t>(listing.files.size()), source.path)) {
    files.push_back(listing.files[static_cast<size_t>(i)]);
    if (labels && classes) data.labels.push_back(listing.labels[static_cast<size_t>(i)]);
  }
  decode_folder_images(files, source, model, labels && !source.labels.empty(), &data);
  data.files = std::move(files);
  return data;
}

Dataset load_npy(const ImageSource& source, const ModelInput& model, bool labels, const IndexPicker& pick,
                 Dataset data) {
  check(source.resize == 0 && source.crop == 0,
        source.path + ": --resize and --crop apply to a folder of images; a .npy holds model inputs as they are");
  check(source.list.empty(), source.list + ": a list of image names picks images of a folder, and " + source.path +
                                 " is a .npy (all its images are read)");
  NpyHeader header = read_npy_header(source.path);
  // A 1-D model's inputs, N x C x L, are its images of C x 1 x L (the same values in the same order).
  if (header.shape.size() == 3 && model.height == 1) header.shape.insert(header.shape.begin() + 2, 1);
  check_npy_images(source.path, header);
  const std::vector<int64_t>& all = header.shape;
  const std::string held = std::to_string(all[1]) + "x" + std::to_string(all[2]) + "x" + std::to_string(all[3]);
  check(all[1] == model.channels && all[2] == model.height && all[3] == model.width,
        source.path + ": images of " + held + " (N x C x H x W: " + std::to_string(all[0]) + " x " + held +
            "), and the model takes " + image_shape_text(model.channels, model.height, model.width));
  const std::vector<int64_t> rows = picked(pick, all[0], source.path);
  data.inputs = read_npy_images(source.path, header, rows);
  check(source.labels.empty() || !directory_exists(source.labels),
        source.labels + ": a folder of masks goes with a folder of images; a .npy of images takes a .npy of labels");
  if (labels && !source.labels.empty()) {
    const NpyLabels all_labels = read_npy_labels(source.labels, model.classes);
    check(all_labels.images == all[0], source.labels + ": " + std::to_string(all_labels.images) +
                                           (all_labels.height * all_labels.width > 1 ? " masks" : " labels") +
                                           " for the " + std::to_string(all[0]) + " images of " + source.path);
    data.label_height = all_labels.height, data.label_width = all_labels.width;
    const int64_t per_image = data.labels_per_image();
    for (int64_t r : rows)
      data.labels.insert(data.labels.end(), all_labels.values.begin() + r * per_image,
                         all_labels.values.begin() + (r + 1) * per_image);
  }
  return data;
}
}  // namespace

bool ImageSource::is_npy() const { return ends_with(lower(path), ".npy"); }

std::string image_shape_text(int channels, int height, int width) {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

ImageFolderListing list_image_folder(const std::string& root) {
  check(directory_exists(root), "no folder '" + root +
                                    "' (an image folder: one subfolder of images per class, or the images themselves)");
  ImageFolderListing listing;
  for (const std::string& name : list_directory(root))
    if (directory_exists(root + "/" + name)) listing.classes.push_back(name);
  if (listing.classes.empty()) {  // the images themselves, unlabelled
    std::vector<std::pair<std::string, std::vector<std::string>>> folder;
    walk(root, 0, &folder);
    listing.files = folder.at(0).second;
    std::sort(listing.files.begin(), listing.files.end());
    check(!listing.files.empty(), root + ": no class folders and no images (.jpg, .jpeg or .png): torchvision's "
                                         "ImageFolder layout, ROOT/CLASS/IMAGE.jpg, or ROOT/IMAGE.jpg without labels");
    return listing;
  }
  for (size_t c = 0; c < listing.classes.size(); ++c) {
    const std::string dir = root + "/" + listing.classes[c];
    const std::vector<std::string> files = images_under(dir);
    check(!files.empty(), dir + ": a class folder with no images (.jpg, .jpeg or .png)");
    listing.files.insert(listing.files.end(), files.begin(), files.end());
    listing.labels.insert(listing.labels.end(), files.size(), static_cast<int32_t>(c));
  }
  return listing;
}

ImageFolderListing list_image_source(const ImageSource& source) {
  const std::string& root = source.path;
  if (!source.list.empty()) {
    check(directory_exists(root), "no folder '" + root + "' (the folder of the images " + source.list + " names)");
    return {{}, images_named_in(source.list, root, source.image_suffix), {}};
  }
  if (source.labels.empty()) return list_image_folder(root);
  check(directory_exists(root), "no folder '" + root + "' (a folder of images, in subfolders or not)");
  ImageFolderListing listing;
  for (const std::string& file : images_under(root))
    if (ends_with(file, source.image_suffix)) listing.files.push_back(file);
  check(!listing.files.empty(), root + ": no images (.jpg, .jpeg or .png" +
                                    (source.image_suffix.empty() ? "" : " ending " + source.image_suffix) +
                                    ") in it or its subfolders");
  return listing;
}

Dataset load_image_source(const ImageSource& source, const ModelInput& model, bool labels, const IndexPicker& pick) {
  check(!source.empty(), "no images given");
  Dataset data;
  data.name = source.path;
  data.channels = model.channels;
  data.height = model.height;
  data.width = model.width;
  data.num_classes = model.classes;
  if (source.is_npy()) return load_npy(source, model, labels, pick, std::move(data));
  check(directory_exists(source.path), "'" + source.path + "' is neither a folder of images nor a .npy file");
  return load_folder(source, model, labels, pick, std::move(data));
}

Dataset load_validation_images(const ModelInput& model, const DataOptions& data, const IndexPicker& pick) {
  if (!data.calib.empty()) return load_image_source(data.calib, model, false, pick);
  check(model.dataset != kNoDataset,
        "the model has no dataset of its own (imported without --dataset): give calibration images with --calib-data "
        "(a folder of class folders of JPEG/PNG images, or a .npy of float32 N x C x H x W model inputs)");
  return load_dataset_images(model.dataset, resolve_data_dir(model.dataset, data.dir), Split::Train, pick);
}

Dataset load_calibration_images(const ModelInput& model, const DataOptions& data, const IndexPicker& pick) {
  Dataset d = load_validation_images(model, data, pick);
  d.labels.clear();  // calibration needs none
  return d;
}

Dataset load_evaluation_images(const ModelInput& model, const DataOptions& data, int64_t limit) {
  check(limit >= 0, "the image limit must be 0 (all) or more");
  if (!data.eval.empty()) {
    const IndexPicker first = [limit](int64_t size) {
      std::vector<int64_t> indices(static_cast<size_t>(limit > 0 ? std::min(limit, size) : size));
      for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(i);
      return indices;
    };
    return load_image_source(data.eval, model, true, first);
  }
  check(model.dataset != kNoDataset,
        "the model has no dataset of its own (imported without --dataset): give test images with --eval-data "
        "(a folder of class folders of JPEG/PNG images, or a .npy of float32 N x C x H x W model inputs, with "
        "--eval-labels LABELS.npy)");
  return load_dataset(model.dataset, resolve_data_dir(model.dataset, data.dir), Split::Test);
}

}  // namespace octet
