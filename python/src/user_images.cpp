#include "python/src/user_images.h"

#include <pybind11/numpy.h>

#include "common/error.h"
#include "data/npy.h"
#include "python/src/arrays.h"

namespace octet::python {

bool is_path(const py::handle& images) {
  return py::isinstance<py::str>(images) || py::hasattr(images, "__fspath__");
}

ImageSource image_source(const py::handle& images, const py::handle& labels, int resize, int crop,
                         const py::handle& names) {
  ImageSource source;
  source.path = py::str(py::module_::import("os").attr("fspath")(images));
  if (!names.is_none()) source.list = py::str(py::module_::import("os").attr("fspath")(names));
  if (!labels.is_none()) {
    if (!is_path(labels))
      throw py::type_error("with images from files, labels are a path (or None): a .npy with a .npy of images, "
                           "a folder of masks with a folder of images; arrays of labels go with arrays of images");
    source.labels = py::str(py::module_::import("os").attr("fspath")(labels));
  }
  source.resize = resize;
  source.crop = crop;
  return source;
}

void set_mask_suffixes(ImageSource* source, const std::string& image_suffix, const std::string& mask_suffix) {
  check((image_suffix.empty() && mask_suffix.empty()) || (!source->labels.empty() && !source->is_npy()),
        "image_suffix and mask_suffix say how a folder's images name their masks: they go with a folder of masks");
  source->image_suffix = image_suffix;
  source->mask_suffix = mask_suffix;
}

Dataset array_dataset(const py::handle& images, const py::handle& labels, const ActShape& input, int classes) {
  const auto x = image_batch(images, input);
  Dataset d;
  d.name = "the images array";
  d.channels = input.c;
  d.height = input.h;
  d.width = input.w;
  d.num_classes = classes;
  d.inputs.assign(x.data(), x.data() + x.size());
  if (labels.is_none()) return d;
  const py::array a = py::array::ensure(labels);
  if (!a || (a.dtype().kind() != 'i' && a.dtype().kind() != 'u'))
    throw py::type_error("labels must be an integer array: (N,), a class per image, or (N, H, W), a mask per image");
  const auto l = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  if ((l.ndim() != 1 && l.ndim() != 3) || l.shape(0) != static_cast<py::ssize_t>(d.size()))
    throw py::value_error("labels have shape " + shape_tuple(std::vector<int64_t>(l.shape(), l.shape() + l.ndim())) +
                          ", expected (" + std::to_string(d.size()) + ",), one per image, or (" +
                          std::to_string(d.size()) + ", H, W), a mask per image");
  if (l.ndim() == 3) d.label_height = l.shape(1), d.label_width = l.shape(2);
  const bool masks = l.ndim() == 3;
  for (py::ssize_t i = 0; i < l.size(); ++i) {
    const int64_t v = l.data()[i];
    if (masks && marks_unlabelled_pixel(v, classes)) {
      d.labels.push_back(kUnlabelledPixel);
      continue;
    }
    if (v < 0 || v >= classes)
      throw py::value_error("label " + std::to_string(i) + " is " + std::to_string(v) + ", outside 0.." +
                            std::to_string(classes - 1) +
                            (masks && marks_unlabelled_pixel(255, classes) ? " (255: a pixel without a label)" : ""));
    d.labels.push_back(static_cast<int32_t>(v));
  }
  return d;
}

}  // namespace octet::python
