#include "data/npy.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "common/file_io.h"

namespace octet {

namespace {
constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr int64_t kMaxHeader = 1 << 20;  // numpy's own headers are a few hundred bytes

// The header dict, a Python literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  void parse(NpyHeader* h, bool* fortran) {
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{', "a dict");
    while (!eat('}')) {
      const std::string key = string_literal();
      expect(':', "':' after '" + key + "'");
      if (key == "descr") {
        skip_space();
        check(pos_ < s_.size() && s_[pos_] != '[',
              path_ + ": a structured dtype (a list of fields): octet reads plain arrays of numbers");
        h->descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        *fortran = boolean();
        has_order = true;
      } else if (key == "shape") {
        h->shape = int_tuple();
        has_shape = true;
      } else {
        fail(path_ + ": unexpected key '" + key + "' in the .npy header (numpy writes descr, fortran_order, shape)");
      }
      if (!eat(',')) {
        expect('}', "',' or '}'");
        break;
      }
    }
    skip_space();
    check(pos_ == s_.size(), path_ + ": text after the .npy header's dict");
    check(has_descr && has_order && has_shape,
          path_ + ": the .npy header lacks " + std::string(!has_descr ? "'descr'" : !has_order ? "'fortran_order'" : "'shape'"));
  }

 private:
  [[noreturn]] void bad(const std::string& what) {
    fail(path_ + ": malformed .npy header (expected " + what + " at character " + std::to_string(pos_) + ")");
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, const std::string& what) {
    if (!eat(c)) bad(what);
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) bad("a quoted string");
    const char quote = s_[pos_++];
    const size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) bad("the closing quote");
    std::string out = s_.substr(pos_, end - pos_);
    if (out.find('\\') != std::string::npos) bad("a string without escapes");
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (const char* word : {"True", "False"})
      if (s_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    bad("True or False");
  }
  std::vector<int64_t> int_tuple() {
    expect('(', "a tuple");
    std::vector<int64_t> out;
    while (!eat(')')) {
      skip_space();
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) bad("a dimension");
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        v = v * 10 + (s_[pos_++] - '0');
        check(v <= (int64_t{1} << 40), path_ + ": a dimension of the .npy header is too large");
      }
      out.push_back(v);
      check(out.size() <= 32, path_ + ": more than 32 dimensions in the .npy header");
      if (!eat(',')) {
        expect(')', "',' or ')'");
        break;
      }
    }
    return out;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Bytes per value of a numeric descr ("<f4" -> 4), refusing what is not a number.
int64_t item_size_of(const std::string& descr, const std::string& path) {
  const bool ok = descr.size() >= 3 && std::strchr("<>|=", descr[0]) && std::strchr("biuf", descr[1]) &&
                  descr.size() <= 4 && std::all_of(descr.begin() + 2, descr.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  check(ok, path + ": dtype '" + descr + "' is not an array of numbers");
  const int64_t size = std::stoll(descr.substr(2));
  check(size == 1 || size == 2 || size == 4 || size == 8, path + ": dtype '" + descr + "' has an odd size");
  return size;
}

uint32_t little_endian(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// "float64 ('<f8')": how a user knows the dtype.
std::string dtype_name(const std::string& descr) {
  const std::string bits = std::to_string(8 * std::stoll(descr.substr(2)));
  const char kind = descr[1];
  const std::string name = kind == 'f' ? "float" + bits : kind == 'i' ? "int" + bits : kind == 'u' ? "uint" + bits : "bool";
  return name + " ('" + descr + "')";
}

// "7", or "(image 2, row 5, column 9)" of a mask: where a bad label is.
std::string label_position(const std::vector<int64_t>& shape, int64_t index) {
  if (shape.size() == 1) return std::to_string(index);
  const int64_t pixels = shape[1] * shape[2];
  return "(image " + std::to_string(index / pixels) + ", row " + std::to_string(index % pixels / shape[2]) +
         ", column " + std::to_string(index % shape[2]) + ")";
}
}  // namespace

int64_t NpyHeader::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // each <= 2^40, and the product was checked against the file
  return n;
}

NpyHeader parse_npy_header(const uint8_t* bytes, size_t size, int64_t file_size, const std::string& path) {
  check(size >= 10 && std::memcmp(bytes, kMagic, kMagicSize) == 0,
        path + ": not a .npy file (it does not start with numpy's magic string \\x93NUMPY)");
  const int major = bytes[6];
  check(major >= 1 && major <= 3, path + ": .npy format version " + std::to_string(major) + " (octet reads 1 to 3)");
  const int length_bytes = major == 1 ? 2 : 4;
  check(size >= static_cast<size_t>(8 + length_bytes), path + ": truncated .npy header");
  const int64_t header_size = little_endian(bytes + 8, length_bytes);
  check(header_size <= kMaxHeader, path + ": a .npy header of " + std::to_string(header_size) + " bytes (too long)");
  NpyHeader h;
  h.data_offset = 8 + length_bytes + header_size;
  check(h.data_offset <= file_size && static_cast<size_t>(h.data_offset) <= size,
        path + ": the file ends inside its .npy header (truncated)");
  const std::string text(reinterpret_cast<const char*>(bytes) + 8 + length_bytes, static_cast<size_t>(header_size));
  bool fortran = false;
  HeaderParser(text, path).parse(&h, &fortran);
  h.item_size = item_size_of(h.descr, path);
  check(!fortran, path + ": the array is in Fortran order (numpy: numpy.save(path, numpy.ascontiguousarray(x)))");
  check(h.descr[0] != '>' || h.item_size == 1, path + ": big-endian dtype '" + h.descr + "' (numpy: x.astype('<" +
                                                    h.descr.substr(1) + "'))");
  int64_t bytes_needed = h.item_size;
  for (int64_t d : h.shape)
    check(!__builtin_mul_overflow(bytes_needed, d, &bytes_needed) && bytes_needed <= (int64_t{1} << 50),
          path + ": the shape " + shape_text(h.shape) + " of its header is too large");
  const int64_t held = file_size - h.data_offset;
  check(held == bytes_needed, path + ": its header announces " + dtype_name(h.descr) + " values of shape " +
                                  shape_text(h.shape) + ", " + std::to_string(bytes_needed) + " bytes, but the file holds " +
                                  std::to_string(held) + (held < bytes_needed ? " (truncated)" : " (extra bytes after them)"));
  return h;
}

NpyHeader read_npy_header(const std::string& path) {
  check(file_exists(path), "missing .npy file '" + path + "'");
  const int64_t size = file_size(path);
  const std::vector<uint8_t> start = read_file_range(path, 0, std::min<int64_t>(size, 12));
  int64_t header_end = size;
  if (start.size() >= 12 && std::memcmp(start.data(), kMagic, kMagicSize) == 0)
    header_end = std::min<int64_t>(size, (start[6] == 1 ? 10 + little_endian(start.data() + 8, 2)
                                                         : 12 + int64_t{little_endian(start.data() + 8, 4)}));
  header_end = std::min<int64_t>(header_end, kMaxHeader + 12);
  const std::vector<uint8_t> head = read_file_range(path, 0, header_end);
  return parse_npy_header(head.data(), head.size(), size, path);
}

void check_npy_images(const std::string& path, const NpyHeader& h) {
  check(h.descr == "<f4", path + ": dtype " + dtype_name(h.descr) +
                              ": octet reads images as float32 (numpy: x.astype(numpy.float32))");
  check(h.shape.size() == 4, path + ": shape " + shape_text(h.shape) + ": images must be N x C x H x W (rank 4)");
  check(h.shape[0] > 0, path + ": holds no images (shape " + shape_text(h.shape) + ")");
  check(h.shape[1] > 0 && h.shape[2] > 0 && h.shape[3] > 0,
        path + ": shape " + shape_text(h.shape) + ": images of no values (channels, height and width must be "
                                                   "positive)");
}

std::vector<float> read_npy_images(const std::string& path, const NpyHeader& h, const std::vector<int64_t>& rows) {
  check_npy_images(path, h);
  const int64_t numel = h.shape[1] * h.shape[2] * h.shape[3];
  std::vector<float> out;
  auto append = [&](int64_t first, int64_t count) {
    const std::vector<uint8_t> bytes = read_file_range(path, h.data_offset + first * numel * 4, count * numel * 4);
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(count * numel));
    std::memcpy(out.data() + at, bytes.data(), bytes.size());
    for (int64_t k = 0; k < count * numel; ++k)
      if (!std::isfinite(out[at + k]))  // (the message only when it fails: this runs for every value)
        fail(path + ": image " + std::to_string(first + k / numel) + " holds " + std::to_string(out[at + k]) +
             " (images must be finite)");
  };
  out.reserve(rows.size() * static_cast<size_t>(numel));
  const size_t run_limit = static_cast<size_t>(std::max<int64_t>(1, (int64_t{64} << 20) / std::max<int64_t>(1, numel * 4)));
  for (size_t k = 0; k < rows.size();) {  // runs of consecutive images (up to 64 MiB) in one read each
    if (rows[k] < 0 || rows[k] >= h.shape[0]) fail(path + ": image " + std::to_string(rows[k]) + " out of range");
    size_t end = k + 1;
    while (end < rows.size() && end - k < run_limit && rows[end] == rows[end - 1] + 1 && rows[end] < h.shape[0]) ++end;
    append(rows[k], static_cast<int64_t>(end - k));
    k = end;
  }
  return out;
}

std::string label_range_text(int64_t classes, bool mask) {
  return " (the model has classes 0.." + std::to_string(classes - 1) +
         (mask && marks_unlabelled_pixel(255, classes) ? "; 255 marks a pixel without a label)" : ")");
}

NpyLabels read_npy_labels(const std::string& path, int64_t classes) {
  const NpyHeader h = read_npy_header(path);
  check(h.descr == "<i8" || h.descr == "<i4" || h.descr == "|u1",
        path + ": dtype " + dtype_name(h.descr) +
            ": labels must be int64, int32 or uint8 (numpy: y.astype(numpy.int64))");
  check(h.shape.size() == 1 || h.shape.size() == 3,
        path + ": shape " + shape_text(h.shape) +
            ": labels must be one per image (rank 1) or one per pixel (rank 3, N x H x W: a segmentation's masks)");
  NpyLabels out;
  out.images = h.shape[0];
  if (h.shape.size() == 3) {
    out.height = h.shape[1], out.width = h.shape[2];
    check(out.height > 0 && out.width > 0, path + ": shape " + shape_text(h.shape) + ": masks of no pixels");
  }
  const bool masks = h.shape.size() == 3;
  const std::vector<uint8_t> bytes = read_file_range(path, h.data_offset, h.count() * h.item_size);
  out.values.resize(static_cast<size_t>(h.count()));
  for (int64_t i = 0; i < h.count(); ++i) {
    int64_t v = 0;
    if (h.item_size == 8) {
      std::memcpy(&v, bytes.data() + i * 8, 8);
    } else if (h.item_size == 4) {
      int32_t v32 = 0;
      std::memcpy(&v32, bytes.data() + i * 4, 4);
      v = v32;
    } else {
      v = bytes[static_cast<size_t>(i)];
    }
    if (masks && marks_unlabelled_pixel(v, classes)) {
      out.values[static_cast<size_t>(i)] = kUnlabelledPixel;
      continue;
    }
    if (v < 0 || (classes > 0 && v >= classes) || v > INT32_MAX)
      fail(path + ": label " + label_position(h.shape, i) + " is " + std::to_string(v) +
           (classes > 0 ? label_range_text(classes, masks) : " (out of range)"));
    out.values[static_cast<size_t>(i)] = static_cast<int32_t>(v);
  }
  return out;
}

std::vector<uint8_t> npy_bytes(const std::string& descr, const std::vector<int64_t>& shape, const void* values) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.insert(out.end(), {1, 0, static_cast<uint8_t>(header.size() & 0xff), static_cast<uint8_t>(header.size() >> 8)});
  out.insert(out.end(), header.begin(), header.end());
  int64_t bytes = item_size_of(descr, "npy_bytes");
  for (int64_t d : shape) bytes *= d;
  const auto* v = static_cast<const uint8_t*>(values);
  out.insert(out.end(), v, v + bytes);
  return out;
}

}  // namespace octet
