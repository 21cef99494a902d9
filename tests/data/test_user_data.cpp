// The user's own images (data/user_data.h): .npy files of model inputs and
// labels, JPEG and PNG files decoded as PIL decodes them, torchvision's
// Resize and CenterCrop, the ImageFolder layout, and where a command's images
// come from. Real data where it is given: CIFAR-10 test images written as PNG
// decode to their pixels exactly, and reach the model as the built-in route
// gives them. (python/tests/test_user_data.py holds the same decoding and
// resizing to torchvision's own, pixel for pixel.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "common/error.h"
#include "data/dataset.h"
#include "data/images.h"
#include "data/npy.h"
#include "data/user_data.h"
#include "tests/support/test_util.h"

#ifdef OCTET_TEST_IMAGE_WRITERS
#include <jpeglib.h>
#include <png.h>
#endif

namespace octet {
namespace {

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_text(const std::string& path, const std::string& text) {
  write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

void write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape, const void* v) {
  write_bytes(path, npy_bytes(descr, shape, v));
}

// `n` images of 3 x 4 x 4 with values i * 0.25 - 3.
std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n * 48));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.25f - 3.0f;
  return v;
}

ImageSource at(const std::string& path, const std::string& labels = "") {
  ImageSource s;
  s.path = path;
  s.labels = labels;
  return s;
}

ModelInput model_input(int channels, int height, int width, int classes, const std::string& dataset = kNoDataset) {
  return ModelInput{dataset, channels, height, width, classes};
}

// The message of loading `source` for a 3 x 4 x 4 model of 10 classes, with labels.
std::string npy_refusal(const ImageSource& source, const ModelInput& model = model_input(3, 4, 4, 10)) {
  return error_of([&] { load_image_source(source, model, true); });
}

#define EXPECT_HAS(text, fragment) EXPECT_NE((text).find(fragment), std::string::npos) << (text)

TEST(NpyData, ImagesAndLabelsAsNumpyWritesThem) {
  TempDir dir;
  const std::vector<float> images = ramp(5);
  const std::vector<int64_t> labels64 = {3, 0, 9, 1, 7};
  const std::vector<int32_t> labels32 = {3, 0, 9, 1, 7};
  write_npy(dir.path("x.npy"), "<f4", {5, 3, 4, 4}, images.data());
  write_npy(dir.path("y64.npy"), "<i8", {5}, labels64.data());
  write_npy(dir.path("y32.npy"), "<i4", {5}, labels32.data());
  for (const char* labels : {"y64.npy", "y32.npy"}) {
    const Dataset d = load_image_source(at(dir.path("x.npy"), dir.path(labels)), model_input(3, 4, 4, 10), true);
    ASSERT_EQ(d.size(), 5);
    EXPECT_TRUE(d.images.empty());
    EXPECT_EQ(d.inputs, images);
    EXPECT_EQ(d.labels, labels32);
    // Already normalised: mean and std are not applied again.
    EXPECT_EQ(normalized_images(d, {0.5f, 0.5f, 0.5f}, {0.2f, 0.2f, 0.2f}, 0, 5), images);
  }
  // Picked images, in the picker's order, read alone; no labels without a labels file.
  const Dataset picked =
      load_image_source(at(dir.path("x.npy")), model_input(3, 4, 4, 10), true, [](int64_t size) {
        EXPECT_EQ(size, 5);
        return std::vector<int64_t>{4, 1, 2};
      });
  ASSERT_EQ(picked.size(), 3);
  EXPECT_FALSE(picked.labelled());
  EXPECT_EQ(std::vector<float>(picked.inputs.begin(), picked.inputs.begin() + 48),
            std::vector<float>(images.begin() + 4 * 48, images.begin() + 5 * 48));
  EXPECT_EQ(picked.inputs[48], images[48]);
}

TEST(NpyData, HeaderVariantsNumpyAccepts) {
  TempDir dir;
  const std::vector<float> images = ramp(2);
  std::vector<uint8_t> data(reinterpret_cast<const uint8_t*>(images.data()),
                            reinterpret_cast<const uint8_t*>(images.data()) + images.size() * 4);
  // Format 2.0 (a 4-byte header length), keys in another order, double quotes, no trailing comma.
  const std::string header = "{\"shape\":(2,3,4,4), 'fortran_order' : False,'descr':'<f4'}\n";
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
  for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<uint8_t>((header.size() >> (8 * k)) & 0xff));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  write_bytes(dir.path("v2.npy"), bytes);
  const NpyHeader h = read_npy_header(dir.path("v2.npy"));
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3, 4, 4}));
  EXPECT_EQ(load_image_source(at(dir.path("v2.npy")), model_input(3, 4, 4, 10), false).inputs, images);
}

// Files numpy.save wrote (the fuzz seeds, tests/fuzz/make_npy_seeds.py).
TEST(NpyData, FilesNumpyWrote) {
  const std::string seeds = source_dir() + "/tests/fuzz/corpus/npy/";
  const ModelInput model = model_input(3, 2, 2, 10);
  const Dataset v1 = load_image_source(at(seeds + "images_2x3x2x2.npy"), model, false);
  const Dataset v2 = load_image_source(at(seeds + "images_v2.npy"), model, false);
  ASSERT_EQ(v1.size(), 2);
  EXPECT_EQ(v1.inputs, v2.inputs);
  EXPECT_EQ(read_npy_labels(seeds + "labels_int64.npy", 10).values, (std::vector<int32_t>{3, 0, 9}));
  EXPECT_EQ(read_npy_labels(seeds + "labels_int32.npy", 10).values, (std::vector<int32_t>{1, 2}));
  const NpyLabels masks = read_npy_labels(seeds + "masks_uint8.npy", 10);
  EXPECT_EQ(masks.images, 2);
  EXPECT_EQ(masks.height, 2);
  EXPECT_EQ(masks.width, 3);
  constexpr int32_t kNone = kUnlabelledPixel;
  EXPECT_EQ(masks.values, (std::vector<int32_t>{0, 1, kNone, 9, 2, 3, kNone, kNone, 4, 5, 6, 7}));
  EXPECT_HAS(error_of([&] { read_npy_labels(seeds + "masks_uint8.npy", 8); }),
             "masks_uint8.npy: label (image 0, row 1, column 0) is 9 (the model has classes 0..7; 255 marks a pixel "
             "without a label)");
  EXPECT_HAS(npy_refusal(at(seeds + "float64.npy"), model), "float64 ('<f8')");
  EXPECT_HAS(npy_refusal(at(seeds + "fortran.npy"), model), "Fortran order");
  EXPECT_HAS(npy_refusal(at(seeds + "scalar.npy"), model), "shape (): images must be N x C x H x W");
}

// A .npy of `descr` and `shape` holding `data_bytes` bytes of values.
void write_npy_header(const std::string& path, const std::string& dict, size_t data_bytes) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(dict.size() & 0xff),
                                static_cast<uint8_t>(dict.size() >> 8)};
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  bytes.resize(bytes.size() + data_bytes, 0);
  write_bytes(path, bytes);
}

TEST(NpyData, BadFilesAreRefusedNamingTheFile) {
  TempDir dir;
  const std::string x = dir.path("bad.npy");
  auto dict = [](const std::string& descr, const std::string& shape, const std::string& order = "False") {
    return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
  };
  const struct {
    std::string dict;
    size_t data_bytes;
    std::string fragment;
  } cases[] = {
      {dict("<f8", "(2, 3, 4, 4)"), 2 * 48 * 8, "float64 ('<f8'): octet reads images as float32"},
      {dict("<f4", "(2, 48)"), 2 * 48 * 4, "(2, 48): images must be N x C x H x W (rank 4)"},
      {dict("<f4", "(2, 3, 4, 4)"), 2 * 48 * 4 - 10, "(truncated)"},
      {dict("<f4", "(2, 3, 4, 4)"), 2 * 48 * 4 + 4, "extra bytes"},
      {dict("<f4", "(2, 3, 4, 4)", "True"), 2 * 48 * 4, "Fortran order"},
      {dict(">f4", "(2, 3, 4, 4)"), 2 * 48 * 4, "big-endian"},
      {dict("<f4", "(0, 3, 4, 4)"), 0, "holds no images"},
      {dict("<f4", "(2, 3, 4, 0)"), 0, "images of no values"},  // found by the fuzzer: a copy of 0 bytes from null
      {dict("<f4", "(1099511627776, 1099511627776, 4, 4)"), 0, "too large"},
      {dict("<U8", "(2,)"), 64, "not an array of numbers"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8, "structured dtype"},
      {"{'descr': '<f4', 'fortran_order': False}\n", 0, "lacks 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 4), 'x': 1}\n", 0, "unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': Nope, 'shape': (1,)}\n", 4, "malformed .npy header"},
      {dict("<f4", "(2, 3, 8, 8)"), 2 * 192 * 4, "images of 3x8x8 (N x C x H x W: 2 x 3x8x8), and the model takes 3x4x4"},
  };
  for (const auto& c : cases) {
    write_npy_header(x, c.dict, c.data_bytes);
    const std::string msg = npy_refusal(at(x));
    EXPECT_HAS(msg, x);
    EXPECT_HAS(msg, c.fragment);
  }
  write_bytes(x, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_HAS(npy_refusal(at(x)), "not a .npy file");
  write_bytes(x, {});
  EXPECT_HAS(npy_refusal(at(x)), "not a .npy file");
  std::vector<uint8_t> cut = npy_bytes("<f4", {2, 3, 4, 4}, ramp(2).data());
  cut.resize(40);  // inside the header
  write_bytes(x, cut);
  EXPECT_HAS(npy_refusal(at(x)), "ends inside its .npy header");
  EXPECT_HAS(npy_refusal(at(dir.path("missing.npy"))), "missing .npy file");

  std::vector<float> images = ramp(2);
  images[50] = std::nanf("");
  write_npy(x, "<f4", {2, 3, 4, 4}, images.data());
  EXPECT_HAS(npy_refusal(at(x)), "image 1 holds nan (images must be finite)");
  ImageSource resized = at(x);
  resized.resize = 8;
  EXPECT_HAS(npy_refusal(resized), "--resize and --crop apply to a folder");
}

TEST(NpyData, BadLabelsAreRefusedNamingTheFile) {
  TempDir dir;
  write_npy(dir.path("x.npy"), "<f4", {5, 3, 4, 4}, ramp(5).data());
  const std::vector<int64_t> out_of_range = {1, 2, 12, 0, 0}, negative = {1, -1, 2, 0, 0};
  const std::vector<float> floats = {1, 2, 3, 4, 5};
  const std::vector<int64_t> four = {1, 2, 3, 4};
  write_npy(dir.path("range.npy"), "<i8", {5}, out_of_range.data());
  write_npy(dir.path("negative.npy"), "<i8", {5}, negative.data());
  write_npy(dir.path("float.npy"), "<f4", {5}, floats.data());
  write_npy(dir.path("four.npy"), "<i8", {4}, four.data());
  write_npy(dir.path("rank2.npy"), "<i8", {2, 2}, four.data());
  const std::string x = dir.path("x.npy");
  EXPECT_HAS(npy_refusal(at(x, dir.path("range.npy"))), "range.npy: label 2 is 12 (the model has classes 0..9)");
  EXPECT_HAS(npy_refusal(at(x, dir.path("negative.npy"))), "negative.npy: label 1 is -1");
  EXPECT_HAS(npy_refusal(at(x, dir.path("float.npy"))),
             "float.npy: dtype float32 ('<f4'): labels must be int64, int32 or uint8");
  EXPECT_HAS(npy_refusal(at(x, dir.path("four.npy"))), "four.npy: 4 labels for the 5 images of " + x);
  EXPECT_HAS(npy_refusal(at(x, dir.path("rank2.npy"))), "rank2.npy: shape (2, 2): labels must be one per image");
}

TEST(UserData, NoDatasetNeedsTheUsersImages) {
  const ModelInput model = model_input(3, 4, 4, 10);
  EXPECT_HAS(error_of([&] { load_calibration_images(model, DataOptions{}, nullptr); }), "--calib-data");
  EXPECT_HAS(error_of([&] { load_evaluation_images(model, DataOptions{}); }), "--eval-data");
  TempDir dir;
  write_npy(dir.path("x.npy"), "<f4", {5, 3, 4, 4}, ramp(5).data());
  DataOptions data;
  data.eval.path = dir.path("x.npy");
  EXPECT_EQ(load_evaluation_images(model, data, 3).size(), 3);
  EXPECT_EQ(load_evaluation_images(model, data, 0).size(), 5);
  EXPECT_HAS(error_of([&] { load_calibration_images(model, data, nullptr); }), "--calib-data");
  data.calib.path = dir.path("nowhere");
  EXPECT_HAS(error_of([&] { load_calibration_images(model, data, nullptr); }),
             "'" + dir.path("nowhere") + "' is neither a folder of images");
}

// ---- JPEG and PNG files, written by libpng and libjpeg here -----------------------------------

#ifdef OCTET_TEST_IMAGE_WRITERS
// `image` (C x H x W, 1 or 3 channels) as an 8-bit PNG.
void write_png(const std::string& path, const Image& image) {
  std::vector<uint8_t> rows(image.pixels.size());
  const size_t plane = static_cast<size_t>(image.height) * image.width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < image.channels; ++c) rows[p * image.channels + c] = image.pixels[c * plane + p];
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = image.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  ASSERT_TRUE(png_image_write_to_file(&png, path.c_str(), 0, rows.data(), 0, nullptr)) << png.message;
}

// `image` as an Adam7-interlaced 8-bit PNG, which the writer above does not
// make (libpng's classic API: an error aborts, as it does without a jump buffer).
void write_interlaced_png(const std::string& path, const Image& image) {
  std::vector<uint8_t> rows(image.pixels.size());
  const size_t plane = static_cast<size_t>(image.height) * image.width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < image.channels; ++c) rows[p * image.channels + c] = image.pixels[c * plane + p];
  std::vector<png_bytep> row_pointers(image.height);
  for (int y = 0; y < image.height; ++y) row_pointers[y] = rows.data() + size_t(y) * image.width * image.channels;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_IHDR(png, info, png_uint_32(image.width), png_uint_32(image.height), 8,
               image.channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_ADAM7,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_rows(png, info, row_pointers.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
}

void write_jpeg(const std::string& path, const Image& image, int quality) {
  std::vector<uint8_t> rows(image.pixels.size());
  const size_t plane = static_cast<size_t>(image.height) * image.width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < image.channels; ++c) rows[p * image.channels + c] = image.pixels[c * plane + p];
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = image.channels;
  cinfo.in_color_space = image.channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = rows.data() + static_cast<size_t>(cinfo.next_scanline) * image.width * image.channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(f);
}
#endif

// A smooth test picture: a diagonal gradient, offset per channel.
Image gradient(int channels, int height, int width) {
  Image im{channels, height, width, {}};
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        im.pixels.push_back(static_cast<uint8_t>(c * 30 + 180 * (x + y) / (width + height)));
  return im;
}

class ImageData : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string missing = image_files_missing();
    if (!missing.empty()) GTEST_SKIP() << missing;
#ifndef OCTET_TEST_IMAGE_WRITERS
    GTEST_SKIP() << "the tests were built without libpng and libjpeg to write images";
#endif
  }
};

#ifdef OCTET_TEST_IMAGE_WRITERS
// CIFAR-10 test images written as PNG (lossless) decode to their pixels exactly.
TEST_F(ImageData, PngOfCifarImagesDecodesToTheOriginalPixels) {
  if (cifar10_dir().empty()) GTEST_SKIP() << "CIFAR-10 binary files not provided (OCTET_CIFAR10_DIR)";
  const Dataset test = load_dataset_images("cifar10", cifar10_dir(), Split::Test, [](int64_t) {
    std::vector<int64_t> first(200);
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
    return first;
  });
  TempDir dir;
  for (int64_t i = 0; i < test.size(); ++i) {
    const Image original{3, 32, 32, std::vector<uint8_t>(test.image(i), test.image(i) + 3072)};
    write_png(dir.path("x.png"), original);
    const Image decoded = read_image_file(dir.path("x.png"), 3);
    ASSERT_EQ(decoded.pixels, original.pixels) << "CIFAR-10 test image " << i;
  }
}

// libpng fills an Adam7-interlaced image's rows in seven passes, so the
// decoder keeps them all (other images go into the planar pixels row by row).
TEST_F(ImageData, InterlacedPngDecodesToItsPixels) {
  TempDir dir;
  const Image original = gradient(3, 9, 13);
  write_interlaced_png(dir.path("adam7.png"), original);
  write_png(dir.path("plain.png"), original);
  std::FILE* f = std::fopen(dir.path("adam7.png").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  uint8_t header[29] = {};
  ASSERT_EQ(std::fread(header, 1, sizeof header, f), sizeof header);
  std::fclose(f);
  ASSERT_EQ(header[28], 1) << "the IHDR's interlace method: Adam7";
  EXPECT_EQ(read_image_file(dir.path("adam7.png"), 3).pixels, original.pixels);
  EXPECT_EQ(read_image_file(dir.path("adam7.png"), 1).pixels, read_image_file(dir.path("plain.png"), 1).pixels);
  write_interlaced_png(dir.path("grey.png"), gradient(1, 7, 5));
  EXPECT_EQ(read_image_file(dir.path("grey.png"), 1).pixels, gradient(1, 7, 5).pixels);
}

TEST_F(ImageData, ChannelsConvertAsPil) {
  TempDir dir;
  Image rgb{3, 1, 2, {255, 10, 0, 20, 0, 30}};  // pixels (255, 0, 0) and (10, 20, 30)
  write_png(dir.path("rgb.png"), rgb);
  const Image grey = read_image_file(dir.path("rgb.png"), 1);
  // PIL's convert("L"): (19595 R + 38470 G + 7471 B + 2^15) >> 16.
  EXPECT_EQ(grey.pixels, (std::vector<uint8_t>{76, (10 * 19595 + 20 * 38470 + 30 * 7471 + 32768) >> 16}));
  write_png(dir.path("grey.png"), Image{1, 1, 2, {7, 200}});
  EXPECT_EQ(read_image_file(dir.path("grey.png"), 3).pixels, (std::vector<uint8_t>{7, 200, 7, 200, 7, 200}));
  EXPECT_HAS(error_of([&] { read_image_file(dir.path("grey.png"), 4); }), "decoded to 1 or 3 channels");
}

TEST_F(ImageData, JpegDecodesCloseToTheOriginal) {
  TempDir dir;
  for (int channels : {3, 1}) {
    const Image original = gradient(channels, 24, 40);
    write_jpeg(dir.path("x.jpg"), original, 95);
    const Image decoded = read_image_file(dir.path("x.jpg"), channels);
    ASSERT_EQ(decoded.height, 24);
    ASSERT_EQ(decoded.width, 40);
    int worst = 0;
    for (size_t k = 0; k < original.pixels.size(); ++k)
      worst = std::max(worst, std::abs(int(decoded.pixels[k]) - int(original.pixels[k])));
    EXPECT_LE(worst, 8) << channels << " channels";
  }
}

TEST_F(ImageData, BrokenFilesAreRefusedNamingTheFile) {
  TempDir dir;
  write_png(dir.path("ok.png"), gradient(3, 16, 16));
  std::vector<uint8_t> png = read_bytes(dir.path("ok.png"));
  write_bytes(dir.path("cut.png"), std::vector<uint8_t>(png.begin(), png.begin() + static_cast<long>(png.size() / 2)));
  std::vector<uint8_t> garbage(png.begin(), png.begin() + 8);
  garbage.resize(200, 0x5a);
  write_bytes(dir.path("garbage.png"), garbage);
  write_jpeg(dir.path("ok.jpg"), gradient(3, 64, 64), 90);
  std::vector<uint8_t> jpg = read_bytes(dir.path("ok.jpg"));
  write_bytes(dir.path("cut.jpg"), std::vector<uint8_t>(jpg.begin(), jpg.begin() + static_cast<long>(jpg.size() / 2)));
  write_bytes(dir.path("header.jpg"), std::vector<uint8_t>(jpg.begin(), jpg.begin() + 20));
  write_text(dir.path("text.png"), "not an image at all");
  const std::pair<const char*, const char*> cases[] = {
      {"cut.png", "cannot decode this PNG"},        {"garbage.png", "cannot decode this PNG"},
      {"cut.jpg", "ends early (truncated file)"},   {"header.jpg", "cannot decode this JPEG"},
      {"text.png", "not a JPEG or PNG file"},
  };
  for (const auto& [name, fragment] : cases) {
    const std::string file = name;  // C++17 lambdas cannot capture a structured binding
    const std::string msg = error_of([&] { read_image_file(dir.path(file), 3); });
    EXPECT_HAS(msg, dir.path(file));
    EXPECT_HAS(msg, fragment);
  }
}
#endif

// PIL's bilinear filter, by hand: shrinking 4 pixels to 2 weighs 3 of them
// (0.75, 0.75, 0.25); enlarging interpolates (values from Pillow 9.4).
TEST(PreprocessData, ResizeAsPil) {
  const Image row{1, 1, 4, {0, 100, 200, 255}};
  EXPECT_EQ(resize_bilinear(row, 1, 2).pixels, (std::vector<uint8_t>{71, 209}));
  const Image column{1, 4, 1, {0, 100, 200, 255}};
  EXPECT_EQ(resize_bilinear(column, 2, 1).pixels, (std::vector<uint8_t>{71, 209}));
  EXPECT_EQ(resize_bilinear(Image{1, 1, 3, {10, 20, 30}}, 1, 5).pixels, (std::vector<uint8_t>{10, 14, 20, 26, 30}));
  // Shorter side to N, the longer int(N * long / short): 30 x 40 -> 20 x 26.
  const Image wide = resize_shorter_side(gradient(3, 30, 40), 20);
  EXPECT_EQ(wide.height, 20);
  EXPECT_EQ(wide.width, 26);
  const Image tall = resize_shorter_side(gradient(1, 41, 30), 20);
  EXPECT_EQ(tall.height, 27);
  EXPECT_EQ(tall.width, 20);
  const Image same = gradient(3, 20, 26);
  EXPECT_EQ(resize_shorter_side(same, 20).pixels, same.pixels);
}

// torchvision's CenterCrop: offsets round((H - size) / 2) with halves to even; zeros around a smaller image.
TEST(PreprocessData, CenterCropAsTorchvision) {
  Image im{1, 5, 5, {}};
  for (int k = 0; k < 25; ++k) im.pixels.push_back(static_cast<uint8_t>(k));
  // 5 - 2 = 3: round(1.5) = 2.
  EXPECT_EQ(center_crop(im, 2).pixels, (std::vector<uint8_t>{12, 13, 17, 18}));
  // 5 - 4 = 1: round(0.5) = 0.
  EXPECT_EQ(center_crop(im, 4).pixels[0], 0);
  // 5 - 3 = 2: 1.
  EXPECT_EQ(center_crop(im, 3).pixels, (std::vector<uint8_t>{6, 7, 8, 11, 12, 13, 16, 17, 18}));
  // Larger: padded with (7 - 5) / 2 = 1 zero on the left and top.
  const Image big = center_crop(im, 7);
  EXPECT_EQ(big.pixels[0], 0);
  EXPECT_EQ(big.pixels[8], 0);   // (1, 1): the image's (0, 0)
  EXPECT_EQ(big.pixels[9], 1);
  EXPECT_EQ(big.pixels[48], 0);
}

// ---- Image folders --------------------------------------------------------------------------

#ifdef OCTET_TEST_IMAGE_WRITERS
class FolderData : public ImageData {};

TEST_F(FolderData, ListedAsTorchvisionsImageFolder) {
  TempDir dir;
  const std::string root = dir.path("root");
  for (const char* d : {"root", "root/b", "root/a", "root/c", "root/a/sub", "root/a/sub-x"}) make_directories(dir.path(d));
  for (const char* f : {"a/2.png", "a/10.png", "a/sub/x.PNG", "a/sub-x/y.png", "b/y.jpeg", "c/z.png", "loose.png"})
    write_png(root + "/" + f, gradient(3, 4, 4));
  write_text(root + "/a/notes.txt", "skipped, as torchvision skips it");
  const ImageFolderListing l = list_image_folder(root);
  EXPECT_EQ(l.classes, (std::vector<std::string>{"a", "b", "c"}));
  // os.walk's folders sorted by path ("a" < "a/sub" < "a/sub-x"), the files in each sorted as strings.
  EXPECT_EQ(l.files, (std::vector<std::string>{root + "/a/10.png", root + "/a/2.png", root + "/a/sub/x.PNG",
                                               root + "/a/sub-x/y.png", root + "/b/y.jpeg", root + "/c/z.png"}));
  EXPECT_EQ(l.labels, (std::vector<int32_t>{0, 0, 0, 0, 1, 2}));

  const Dataset d = load_image_source(at(root), model_input(3, 4, 4, 3), true);
  ASSERT_EQ(d.size(), 6);
  EXPECT_EQ(d.labels, l.labels);
  EXPECT_EQ(std::vector<uint8_t>(d.image(5), d.image(5) + 48), gradient(3, 4, 4).pixels);
  EXPECT_HAS(error_of([&] { load_image_source(at(root), model_input(3, 4, 4, 10), true); }),
             root + ": 3 class folders, and the model has 10 classes");
  EXPECT_FALSE(load_image_source(at(root), model_input(3, 4, 4, 10), false).labelled());  // calibration: no labels
}

TEST_F(FolderData, BadFoldersAreRefusedNamingWhat) {
  TempDir dir;
  const ModelInput model = model_input(3, 8, 8, 2);
  auto refusal = [&](const ImageSource& s) { return error_of([&] { load_image_source(s, model, true); }); };
  make_directories(dir.path("empty"));
  EXPECT_HAS(refusal(at(dir.path("empty"))), dir.path("empty") + ": no class folders");
  make_directories(dir.path("noimages/a"));
  make_directories(dir.path("noimages/b"));
  write_png(dir.path("noimages/a/1.png"), gradient(3, 8, 8));
  write_text(dir.path("noimages/b/readme.txt"), "");
  EXPECT_HAS(refusal(at(dir.path("noimages"))), dir.path("noimages/b") + ": a class folder with no images");
  make_directories(dir.path("bmp/a"));
  write_text(dir.path("bmp/a/1.bmp"), "BM");
  EXPECT_HAS(refusal(at(dir.path("bmp"))), dir.path("bmp/a/1.bmp") + ": octet reads JPEG and PNG images only");
  make_directories(dir.path("broken/a"));
  make_directories(dir.path("broken/b"));
  write_png(dir.path("broken/a/1.png"), gradient(3, 8, 8));
  write_text(dir.path("broken/b/2.png"), "not a png");
  EXPECT_HAS(refusal(at(dir.path("broken"))), dir.path("broken/b/2.png") + ": not a JPEG or PNG file");
  // Mixed sizes: the one that does not fit is named, with both shapes; --resize and --crop make them fit.
  make_directories(dir.path("mixed/a"));
  make_directories(dir.path("mixed/b"));
  write_png(dir.path("mixed/a/1.png"), gradient(3, 8, 8));
  write_jpeg(dir.path("mixed/b/2.jpg"), gradient(3, 12, 10), 90);
  const std::string msg = refusal(at(dir.path("mixed")));
  EXPECT_HAS(msg, dir.path("mixed/b/2.jpg") + ": an image of 3x12x10 and the model takes 3x8x8");
  EXPECT_HAS(msg, "the images differ in size: the first was 3x8x8");
  EXPECT_HAS(msg, "pass --resize and --crop");
  ImageSource fitted = at(dir.path("mixed"));
  fitted.resize = 8;
  fitted.crop = 8;
  const Dataset d = load_image_source(fitted, model, true);
  EXPECT_EQ(d.size(), 2);
  EXPECT_EQ(std::vector<uint8_t>(d.image(0), d.image(0) + 192), gradient(3, 8, 8).pixels);
  EXPECT_EQ(std::vector<uint8_t>(d.image(1), d.image(1) + 192),
            center_crop(resize_shorter_side(read_image_file(dir.path("mixed/b/2.jpg"), 3), 8), 8).pixels);
  fitted.crop = 0;
  EXPECT_HAS(refusal(fitted), "3x12x10, 3x9x8 after --resize/--crop, and the model takes 3x8x8");
  EXPECT_HAS(refusal(at(dir.path("nowhere"))), "is neither a folder of images");
  const ImageSource with_labels = at(dir.path("mixed"), dir.path("y.npy"));
  EXPECT_HAS(refusal(with_labels), dir.path("y.npy") + ": with a folder of images, --eval-labels is a folder of PNG "
                                                       "masks (a .npy of labels goes with a .npy of images)");
}

// The same CIFAR-10 test images through the built-in route, a PNG folder and
// a .npy of the built-in route's inputs: the same model inputs, bit for bit,
// and the same labels.
TEST_F(FolderData, CifarImagesReachTheModelAsTheBuiltInRouteGivesThem) {
  if (cifar10_dir().empty()) GTEST_SKIP() << "CIFAR-10 binary files not provided (OCTET_CIFAR10_DIR)";
  const DatasetInfo info = dataset_info("cifar10");  // a copy: GCC 13 takes the reference for a dangling one
  const int64_t n = 300;
  const Dataset builtin = load_dataset_images("cifar10", cifar10_dir(), Split::Test, [](int64_t) {
    std::vector<int64_t> first(300);
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
    return first;
  });
  TempDir dir;
  for (const std::string& name : info.classes) make_directories(dir.path("png/" + name));
  std::vector<int64_t> folder_order;  // the built-in index of each folder image (ImageFolder sorts by class)
  for (int label = 0; label < 10; ++label)
    for (int64_t i = 0; i < n; ++i)
      if (builtin.labels[i] == label) folder_order.push_back(i);
  for (int64_t i = 0; i < n; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/%05lld.png", static_cast<long long>(i));
    write_png(dir.path("png/" + info.classes[builtin.labels[i]]) + name,
              Image{3, 32, 32, std::vector<uint8_t>(builtin.image(i), builtin.image(i) + 3072)});
  }
  const std::vector<float> expected = normalized_images(builtin, info.mean, info.std, folder_order);
  std::vector<int64_t> expected_labels;
  for (int64_t i : folder_order) expected_labels.push_back(builtin.labels[i]);
  write_npy(dir.path("x.npy"), "<f4", {n, 3, 32, 32}, expected.data());
  write_npy(dir.path("y.npy"), "<i8", {n}, expected_labels.data());

  DataOptions png, npy;
  png.eval.path = dir.path("png");
  npy.eval = at(dir.path("x.npy"), dir.path("y.npy"));
  for (const DataOptions* data : {&png, &npy}) {
    const Dataset d = load_evaluation_images(ModelInput{kNoDataset, 3, 32, 32, 10}, *data);
    ASSERT_EQ(d.size(), n);
    EXPECT_EQ(std::vector<int64_t>(d.labels.begin(), d.labels.end()), expected_labels);
    EXPECT_EQ(normalized_images(d, info.mean, info.std, 0, n), expected) << d.name;
  }
  // Calibration picks from the folder as from any dataset, without labels.
  png.calib = png.eval;
  const Dataset calib = load_calibration_images(ModelInput{kNoDataset, 3, 32, 32, 10}, png, [](int64_t size) {
    EXPECT_EQ(size, 300);
    return std::vector<int64_t>{0, 150, 299};
  });
  EXPECT_FALSE(calib.labelled());
  EXPECT_EQ(normalized_images(calib, info.mean, info.std, 1, 1),
            normalized_images(builtin, info.mean, info.std, {folder_order[150]}));
}
#endif

}  // namespace
}  // namespace octet
