// .npy files as numpy.save writes them (format versions 1 to 3): the header's
// dtype, order and shape, checked against the bytes the file holds, and the
// values of the two kinds octet reads: float32 model inputs and integer labels.
// Every refusal names the file; nothing is read past what the header proves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

struct NpyHeader {
  std::string descr;           // numpy's dtype string: "<f4", "<i8", "|u1", ...
  std::vector<int64_t> shape;  // () for a scalar
  int64_t data_offset = 0;     // where the values start
  int64_t item_size = 0;       // bytes per value (from descr)

  int64_t count() const;  // values: the product of the shape
};

// Parses the header at the start of `bytes` (the file's first bytes, at least
// the whole header) of a file of `file_size` bytes named `path`: the magic
// string, the version, the header dict ('descr', 'fortran_order', 'shape'),
// and that the file holds exactly the values the shape announces. Fortran
// order and structured dtypes are refused.
NpyHeader parse_npy_header(const uint8_t* bytes, size_t size, int64_t file_size, const std::string& path);

// Reads and checks the header of `path` (reads only the header).
NpyHeader read_npy_header(const std::string& path);

// Images for a model: a float32 ('<f4') array of rank 4, N x C x H x W with
// N > 0 (check_npy_images fails naming the file otherwise), all finite.
// `rows`: the indices of the images to read, in that order.
void check_npy_images(const std::string& path, const NpyHeader& header);
std::vector<float> read_npy_images(const std::string& path, const NpyHeader& header, const std::vector<int64_t>& rows);

// A pixel without a label in a segmentation's masks.
constexpr int32_t kUnlabelledPixel = -1;
// Whether a mask's value marks a pixel without a label: 255, unless a model of `classes` has a class 255.
inline bool marks_unlabelled_pixel(int64_t value, int64_t classes) { return value == 255 && classes <= 255; }
// What a label that is no class is told, after its value: " (the model has classes 0..N)", with "; 255 marks a
// pixel without a label" for a mask's where 255 does.
std::string label_range_text(int64_t classes, bool mask);

// Labels: an int64, int32 or uint8 array, each in [0, classes) when `classes`
// > 0: of rank 1, a class per image; of rank 3, N x H x W, a class per pixel
// (a segmentation's masks), where 255 marks a pixel without a label, as Pascal
// VOC's and Cityscapes' masks do (kUnlabelledPixel; a class where classes > 255).
struct NpyLabels {
  std::vector<int32_t> values;  // images x height x width
  int64_t images = 0, height = 1, width = 1;
};
NpyLabels read_npy_labels(const std::string& path, int64_t classes);

// numpy.save's bytes (format 1.0) of an array of `descr` ("<f4", "<i8", ...),
// `shape` and little-endian `values` (count x item size bytes): for tests and tools.
std::vector<uint8_t> npy_bytes(const std::string& descr, const std::vector<int64_t>& shape, const void* values);

}  // namespace octet
