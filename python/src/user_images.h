// The user's own images as octet.quantize and octet.evaluate take them
// (data/user_data.h): a path, as the command line's --calib-data and
// --eval-data (a folder in torchvision's ImageFolder layout, or a .npy of
// float32 model inputs), or a float32 numpy array N x C x H x W of model
// inputs already normalised, with labels as an integer array or a .npy path.
#pragma once

#include <pybind11/pybind11.h>

#include "data/user_data.h"
#include "graph/graph.h"

namespace octet::python {

namespace py = pybind11;

// True for a str or an os.PathLike: the images are files.
bool is_path(const py::handle& images);

// The files of `images` (a path), `labels` (None, a .npy path or a folder of masks) and `names` (None, or a text
// file naming the images of a folder to read: ImageSource::list).
ImageSource image_source(const py::handle& images, const py::handle& labels, int resize, int crop,
                         const py::handle& names = py::none());
// With a folder of masks: how an image names its mask (ImageSource's image_suffix, mask_suffix).
void set_mask_suffixes(ImageSource* source, const std::string& image_suffix, const std::string& mask_suffix);

// An array of model inputs (checked against `input` as predict checks them)
// and its labels (None, or integers N in 0 .. classes - 1) as a Dataset. Call
// with the GIL held.
Dataset array_dataset(const py::handle& images, const py::handle& labels, const ActShape& input, int classes);

}  // namespace octet::python
