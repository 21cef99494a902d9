#include "data/dataset.h"

#include <algorithm>
#include <map>

#include "common/error.h"

namespace octet {

namespace {
const std::vector<DatasetInfo>& known_datasets() {
  static const std::vector<DatasetInfo> infos = {
      {"cifar10", 3, 32, 32,
       {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"},
       {0.4914f, 0.4822f, 0.4465f},
       {0.2470f, 0.2435f, 0.2616f},
       ""},
      {"fashion-mnist", 1, 28, 28,
       {"t-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"},
       {0.2860f},
       {0.3530f},
       "/usr/share/datasets/fashion-mnist"},
      {"mnist", 1, 28, 28, {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, {0.1307f}, {0.3081f}, ""},
  };
  return infos;
}

std::vector<std::string> cifar10_files(const std::string& dir, Split split) {
  if (split == Split::Test) return {dir + "/test_batch.bin"};
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) files.push_back(dir + "/data_batch_" + std::to_string(i) + ".bin");
  return files;
}

void load_cifar10(const std::string& dir, Split split, Dataset* data) {
  for (const std::string& file : cifar10_files(dir, split)) read_cifar10_file(file, data);
}

// The records at `indices` of the split's files taken as one sequence.
void load_cifar10_records(const std::string& dir, Split split, const IndexPicker& pick, Dataset* data) {
  const std::vector<std::string> files = cifar10_files(dir, split);
  std::vector<int64_t> starts = {0};
  for (const std::string& file : files) starts.push_back(starts.back() + cifar10_record_count(file));
  for (int64_t index : pick(starts.back())) {
    check(index >= 0 && index < starts.back(), "image index " + std::to_string(index) + " out of range");
    const size_t f = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), index) - starts.begin()) - 1;
    read_cifar10_records(files[f], {index - starts[f]}, data);
  }
}

Dataset empty_dataset(const std::string& name) {
  const DatasetInfo& info = dataset_info(name);
  Dataset data;
  data.name = name;
  data.channels = info.channels;
  data.height = info.height;
  data.width = info.width;
  data.num_classes = static_cast<int>(info.classes.size());
  return data;
}

void load_idx(const std::string& dir, Split split, Dataset* data) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  std::vector<int> image_dims, label_dims;
  const std::string image_path = dir + "/" + prefix + "-images-idx3-ubyte";
  const std::string label_path = dir + "/" + prefix + "-labels-idx1-ubyte";
  data->images = read_idx_file(image_path, &image_dims);
  const std::vector<uint8_t> labels = read_idx_file(label_path, &label_dims);
  data->labels.assign(labels.begin(), labels.end());
  check(image_dims.size() == 3, image_path + ": expected 3 dimensions (N, rows, cols)");
  check(label_dims.size() == 1, label_path + ": expected 1 dimension (N)");
  check(image_dims[0] == label_dims[0], image_path + " holds " + std::to_string(image_dims[0]) + " images but " +
                                            label_path + " " + std::to_string(label_dims[0]) + " labels");
  check(image_dims[1] == data->height && image_dims[2] == data->width,
        image_path + ": images are " + std::to_string(image_dims[1]) + "x" + std::to_string(image_dims[2]) +
            ", expected " + std::to_string(data->height) + "x" + std::to_string(data->width));
  for (int32_t label : data->labels)
    check(label < data->num_classes, label_path + ": label " + std::to_string(label) + " is out of range");
}
}  // namespace

const DatasetInfo& dataset_info(const std::string& name) {
  for (const DatasetInfo& info : known_datasets())
    if (info.name == name) return info;
  std::string known;
  for (const DatasetInfo& info : known_datasets()) known += (known.empty() ? "" : ", ") + info.name;
  fail("unknown dataset '" + name + "' (known: " + known + ")");
}

std::vector<std::string> dataset_names() {
  std::vector<std::string> names;
  for (const DatasetInfo& info : known_datasets()) names.push_back(info.name);
  return names;
}

std::string resolve_data_dir(const std::string& dataset, const std::string& dir) {
  if (!dir.empty()) return dir;
  const std::string fallback = dataset_info(dataset).default_dir;
  check(!fallback.empty(), "--data DIR is required for dataset '" + dataset + "' (the folder holding its files)");
  return fallback;
}

Dataset load_dataset(const std::string& name, const std::string& dir, Split split) {
  Dataset data = empty_dataset(name);
  if (name == "cifar10")
    load_cifar10(dir, split, &data);
  else
    load_idx(dir, split, &data);
  check(data.size() > 0, "dataset '" + name + "' in '" + dir + "' has no samples");
  return data;
}

Dataset load_dataset_images(const std::string& name, const std::string& dir, Split split, const IndexPicker& pick) {
  if (name == "cifar10") {
    Dataset data = empty_dataset(name);
    load_cifar10_records(dir, split, pick, &data);
    check(data.size() > 0, "dataset '" + name + "' in '" + dir + "': no images were picked");
    return data;
  }
  const Dataset all = load_dataset(name, dir, split);
  Dataset data = empty_dataset(name);
  for (int64_t index : pick(all.size())) {
    check(index >= 0 && index < all.size(), "image index " + std::to_string(index) + " out of range");
    data.images.insert(data.images.end(), all.image(index), all.image(index) + all.image_numel());
    data.labels.push_back(all.labels[index]);
  }
  check(data.size() > 0, "dataset '" + name + "' in '" + dir + "': no images were picked");
  return data;
}

std::vector<float> normalized_images(const Dataset& data, const std::vector<float>& mean, const std::vector<float>& std,
                                     const std::vector<int64_t>& indices) {
  if (!data.inputs.empty()) {  // already normalised
    const int64_t numel = data.image_numel();
    std::vector<float> out;
    out.reserve(indices.size() * static_cast<size_t>(numel));
    for (int64_t index : indices) {
      if (index < 0 || index >= data.size()) fail("image index " + std::to_string(index) + " out of range");
      out.insert(out.end(), data.inputs.begin() + index * numel, data.inputs.begin() + (index + 1) * numel);
    }
    return out;
  }
  check(static_cast<int>(mean.size()) == data.channels && static_cast<int>(std.size()) == data.channels,
        "normalisation needs one mean and std per channel");
  const int64_t plane = static_cast<int64_t>(data.height) * data.width;
  std::vector<float> out(indices.size() * static_cast<size_t>(data.image_numel()));
  float* dst = out.data();
  for (int64_t index : indices) {
    check(index >= 0 && index < data.size(), "image index " + std::to_string(index) + " out of range");
    const uint8_t* src = data.image(index);
    for (int c = 0; c < data.channels; ++c) {
      const float scale = 1.0f / (255.0f * std[c]), shift = -mean[c] / std[c];
      for (int64_t p = 0; p < plane; ++p) *dst++ = static_cast<float>(*src++) * scale + shift;
    }
  }
  return out;
}

std::vector<float> normalized_images(const Dataset& data, const std::vector<float>& mean, const std::vector<float>& std,
                                     int64_t first, int64_t count) {
  std::vector<int64_t> indices(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) indices[i] = first + i;
  return normalized_images(data, mean, std, indices);
}

}  // namespace octet
