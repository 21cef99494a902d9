// JPEG (libjpeg-turbo) and PNG (libpng) decoding as PIL decodes them. Both
// libraries report errors by longjmp: each decoder runs in a function whose
// own variables are all trivially destructible (what it fills lives in the
// caller), so the jump skips no destructor.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/error.h"
#include "common/file_io.h"
#include "data/images.h"

#ifdef OCTET_HAVE_IMAGE_FILES
#include <jpeglib.h>  // after <cstdio>: it needs FILE
#include <jerror.h>
#include <png.h>
#endif

namespace octet {

namespace {
// PIL's limit (Image.MAX_IMAGE_PIXELS * 2, where it stops with an error): a
// header may announce any size, the decoder allocates only what this allows.
constexpr int64_t kMaxPixels = 2 * int64_t{89478485};

// Decoded row y (W x decoded_channels, interleaved) into the planar image
// `out` (C x H x W), to its channels as PIL's convert(): grey replicated to
// RGB, RGB to grey by ITU-R 601-2. Rows go in as they are decoded, so a large
// image is not held twice.
void put_row(const uint8_t* row, int64_t y, int decoded_channels, Image* out) {
  const size_t plane = static_cast<size_t>(out->height) * out->width, first = static_cast<size_t>(y) * out->width;
  uint8_t* pixels = out->pixels.data();
  for (size_t x = 0; x < static_cast<size_t>(out->width); ++x) {
    const uint8_t* px = row + x * decoded_channels;
    const size_t p = first + x;
    if (out->channels == decoded_channels) {
      for (int c = 0; c < out->channels; ++c) pixels[c * plane + p] = px[c];
    } else if (out->channels == 3) {  // grey -> RGB
      for (int c = 0; c < 3; ++c) pixels[c * plane + p] = px[0];
    } else {  // RGB -> grey, PIL's L24
      pixels[p] = static_cast<uint8_t>((px[0] * 19595 + px[1] * 38470 + px[2] * 7471 + 0x8000) >> 16);
    }
  }
}

void check_size(int64_t width, int64_t height, const std::string& name) {
  check(width > 0 && height > 0 && width * height <= kMaxPixels,
        name + ": an image of " + std::to_string(width) + "x" + std::to_string(height) + " pixels (octet decodes up to " +
            std::to_string(kMaxPixels) + ")");
}

#ifdef OCTET_HAVE_IMAGE_FILES
struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void jpeg_on_error(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

// Warnings pass (as in PIL), but data that ends early is an error.
extern "C" void jpeg_on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    auto* e = reinterpret_cast<JpegError*>(cinfo->err);
    std::snprintf(e->message, sizeof e->message, "the JPEG data ends early (truncated file)");
    std::longjmp(e->jump, 1);
  }
}

struct Decoded {
  bool indices = false;       // a mask's: palette indices or 8-bit grey, not colours
  Image image;                // its channels set by the caller: the ones asked for
  std::vector<uint8_t> rows;  // decoded rows, W x C each: one at a time, or all of an interlaced PNG
  int64_t width = 0, height = 0;
  int channels = 0;  // decoded
  const char* refusal = nullptr;  // a reason of octet's own
};

// The image's pixels, once the decoder knows its size.
void allocate(Decoded* d) {
  d->image.height = static_cast<int>(d->height);
  d->image.width = static_cast<int>(d->width);
  d->image.pixels.resize(static_cast<size_t>(d->width * d->height * d->image.channels));
}

// nullptr, or the library's message (in `error`).
const char* decode_jpeg(const uint8_t* bytes, size_t size, jpeg_decompress_struct* cinfo, JpegError* error, Decoded* out) {
  cinfo->err = jpeg_std_error(&error->mgr);
  error->mgr.error_exit = jpeg_on_error;
  error->mgr.emit_message = jpeg_on_message;
  if (setjmp(error->jump)) {
    jpeg_destroy_decompress(cinfo);
    return error->message;
  }
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, bytes, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  out->width = cinfo->image_width;
  out->height = cinfo->image_height;
  if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK)
    out->refusal = "a CMYK JPEG (octet reads RGB and greyscale JPEGs)";
  if (out->refusal || out->width * out->height > kMaxPixels) {  // the caller says why
    jpeg_destroy_decompress(cinfo);
    return nullptr;
  }
  // Greyscale stays grey (PIL's mode L); colour is decoded to RGB, then converted if need be.
  cinfo->out_color_space = cinfo->jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(cinfo);
  out->width = cinfo->output_width;
  out->height = cinfo->output_height;
  out->channels = cinfo->output_components;
  allocate(out);
  out->rows.resize(static_cast<size_t>(out->width * out->channels));
  while (cinfo->output_scanline < cinfo->output_height) {
    const JDIMENSION y = cinfo->output_scanline;
    JSAMPROW row = out->rows.data();
    jpeg_read_scanlines(cinfo, &row, 1);
    put_row(out->rows.data(), y, out->channels, &out->image);
  }
  jpeg_finish_decompress(cinfo);
  jpeg_destroy_decompress(cinfo);
  return nullptr;
}

struct PngSource {
  const uint8_t* bytes;
  size_t size, at;
  char message[256];
};

extern "C" void png_on_error(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof src->message, "%s", message);
  png_longjmp(png, 1);
}
extern "C" void png_on_warning(png_structp, png_const_charp) {}  // as PIL: warnings (an odd colour profile) pass

extern "C" void png_read_bytes(png_structp png, png_bytep data, size_t length) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > src->size - src->at) png_error(png, "the PNG data ends early (truncated file)");
  std::memcpy(data, src->bytes + src->at, length);
  src->at += length;
}

// Why a PNG of this colour type and bit depth holds no class indices, or nullptr.
const char* mask_refusal(int color, int depth) {
  if (color == PNG_COLOR_TYPE_PALETTE) return nullptr;
  if (color != PNG_COLOR_TYPE_GRAY)
    return "a colour mask; masks are class indices: a palette PNG (as Pascal VOC's) or an 8-bit greyscale one";
  if (depth == 16) return "a 16-bit mask; octet reads 8-bit class indices (a palette or 8-bit greyscale PNG)";
  if (depth < 8) return "a 1, 2 or 4-bit greyscale mask; save it as 8-bit greyscale (or as a palette PNG)";
  return nullptr;
}

// nullptr, or the library's message (in `src`). `row_pointers` is the caller's.
const char* decode_png(PngSource* src, std::vector<png_bytep>* row_pointers, Decoded* out) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src, png_on_error, png_on_warning);
  if (!png) return "out of memory";
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return src->message;
  }
  png_set_read_fn(png, src, png_read_bytes);
  png_set_user_limits(png, 1u << 20, 1u << 20);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  out->width = width;
  out->height = height;
  if (out->width * out->height > kMaxPixels) {  // the caller says why
    png_destroy_read_struct(&png, &info, nullptr);
    return nullptr;
  }
  const int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  if (out->indices) out->refusal = mask_refusal(color, depth);
  if (out->refusal) {  // the caller says why
    png_destroy_read_struct(&png, &info, nullptr);
    return nullptr;
  }
  if (color == PNG_COLOR_TYPE_PALETTE) {
    if (out->indices)
      png_set_packing(png);  // 1, 2 and 4-bit indices to bytes, unscaled
    else
      png_set_palette_to_rgb(png);  // its transparency is not made alpha
  }
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  out->channels = png_get_channels(png, info);
  allocate(out);
  const size_t row_bytes = size_t{width} * out->channels;
  if (passes == 1) {
    out->rows.resize(row_bytes);
    for (png_uint_32 y = 0; y < height; ++y) {
      png_read_row(png, out->rows.data(), nullptr);
      put_row(out->rows.data(), y, out->channels, &out->image);
    }
  } else {  // each pass fills in pixels of every row
    out->rows.resize(row_bytes * height);
    row_pointers->resize(height);
    for (png_uint_32 y = 0; y < height; ++y) (*row_pointers)[y] = out->rows.data() + y * row_bytes;
    png_read_image(png, row_pointers->data());
    for (png_uint_32 y = 0; y < height; ++y) put_row((*row_pointers)[y], y, out->channels, &out->image);
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return nullptr;
}
#endif
}  // namespace

std::string image_files_missing() {
#ifdef OCTET_HAVE_IMAGE_FILES
  return "";
#else
  return "this octet was built without libpng and libjpeg (Debian: apt-get install libpng-dev libjpeg-dev, then build "
         "again), so it reads no JPEG or PNG files";
#endif
}

namespace {
// An image's pixels as `channels` channels, or (indices) a mask's class indices.
Image decode(const uint8_t* bytes, size_t size, int channels, bool indices, const std::string& name) {
  const bool png = size >= 8 && std::memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0;
  const bool jpeg = size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff;
  check(png || jpeg, name + (indices ? ": not a PNG file (masks are PNGs of class indices)"
                                     : ": not a JPEG or PNG file (octet reads those two formats)"));
  check(!(jpeg && indices), name + ": a JPEG mask (JPEG's lossy compression changes class indices; masks are PNGs)");
  const std::string missing = image_files_missing();
  check(missing.empty(), name + ": " + missing);
#ifdef OCTET_HAVE_IMAGE_FILES
  Decoded d;
  d.indices = indices;
  d.image.channels = channels;
  const char* error = nullptr;
  if (jpeg) {
    jpeg_decompress_struct cinfo;
    JpegError jpeg_error;
    error = decode_jpeg(bytes, size, &cinfo, &jpeg_error, &d);
    if (error) fail(name + ": cannot decode this JPEG: " + std::string(error));
  } else {
    PngSource src{bytes, size, 0, "unknown error"};
    std::vector<png_bytep> row_pointers;
    error = decode_png(&src, &row_pointers, &d);
    if (error) fail(name + ": cannot decode this PNG: " + std::string(error));
  }
  check(d.refusal == nullptr, name + ": " + (d.refusal ? d.refusal : ""));
  check_size(d.width, d.height, name);
  check(!d.image.pixels.empty(), name + ": decoded to nothing");
  return std::move(d.image);
#else
  return {};
#endif
}
}  // namespace

Image decode_image(const uint8_t* bytes, size_t size, int channels, const std::string& name) {
  check(channels == 1 || channels == 3,
        name + ": images are decoded to 1 or 3 channels; the model takes " + std::to_string(channels));
  return decode(bytes, size, channels, false, name);
}

Image read_image_file(const std::string& path, int channels) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return decode_image(bytes.data(), bytes.size(), channels, path);
}

Image decode_mask(const uint8_t* bytes, size_t size, const std::string& name) {
  return decode(bytes, size, 1, true, name);
}

Image read_mask_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return decode_mask(bytes.data(), bytes.size(), path);
}

}  // namespace octet
