// PIL's resampling (Pillow's libImaging/Resample.c) for the bilinear filter on
// 8-bit images, in the same arithmetic: double coefficients per output pixel
// over a support widened by the scale when shrinking (the antialiasing),
// normalised, rounded to 22-bit fixed point, a horizontal pass over the rows
// the vertical pass reads, then the vertical pass; and torchvision's Resize
// and CenterCrop sizes.
#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "data/images.h"

namespace octet {

namespace {
constexpr int kPrecisionBits = 32 - 8 - 2;

double bilinear(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's precompute_coeffs and normalize_coeffs_8bpc for the box [0, in_size).
struct Coefficients {
  int ksize = 0;
  std::vector<int> bounds;    // per output pixel: first input pixel, count
  std::vector<int32_t> k;     // per output pixel: ksize fixed-point weights
};

Coefficients precompute(int in_size, int out_size) {
  Coefficients c;
  const double scale = static_cast<double>(static_cast<float>(in_size) - 0.0f) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = 1.0 * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<size_t>(out_size) * 2);
  c.k.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> kk(static_cast<size_t>(c.ksize));
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = 0.0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = bilinear((x + xmin - center + 0.5) * ss);
      kk[x] = w;
      ww += w;
    }
    for (int x = 0; x < xmax; ++x)
      if (ww != 0.0) kk[x] /= ww;
    for (int x = 0; x < xmax; ++x) {
      const double v = kk[x] * (1 << kPrecisionBits);
      c.k[static_cast<size_t>(xx) * c.ksize + x] = static_cast<int32_t>(kk[x] < 0 ? -0.5 + v : 0.5 + v);
    }
    c.bounds[2 * xx] = xmin;
    c.bounds[2 * xx + 1] = xmax;
  }
  return c;
}

uint8_t clip8(int32_t in) {
  if (in >= (1 << kPrecisionBits << 8)) return 255;
  if (in <= 0) return 0;
  return static_cast<uint8_t>(in >> kPrecisionBits);
}
}  // namespace

Image resize_bilinear(const Image& in, int height, int width) {
  check(height > 0 && width > 0, "cannot resize an image to " + std::to_string(width) + "x" + std::to_string(height));
  const bool horizontal = width != in.width, vertical = height != in.height;
  const Coefficients ch = precompute(in.width, width);
  Coefficients cv = precompute(in.height, height);
  if (!horizontal && !vertical) return in;
  Image across;  // the horizontal pass's result; the input is not copied (a large image held twice)
  const Image* cur = &in;
  if (horizontal) {
    // Only the rows the vertical pass reads (all of them when it does not run).
    const int first = cv.bounds[0], last = cv.bounds[2 * height - 2] + cv.bounds[2 * height - 1];
    for (int y = 0; y < height; ++y) cv.bounds[2 * y] -= first;
    Image out{in.channels, last - first, width, {}};
    out.pixels.resize(static_cast<size_t>(out.channels) * out.height * width);
    for (int c = 0; c < in.channels; ++c)
      for (int y = 0; y < out.height; ++y) {
        const uint8_t* row = in.pixels.data() + (static_cast<size_t>(c) * in.height + y + first) * in.width;
        uint8_t* dst = out.pixels.data() + (static_cast<size_t>(c) * out.height + y) * width;
        for (int xx = 0; xx < width; ++xx) {
          const int xmin = ch.bounds[2 * xx], xmax = ch.bounds[2 * xx + 1];
          const int32_t* k = ch.k.data() + static_cast<size_t>(xx) * ch.ksize;
          int32_t ss = 1 << (kPrecisionBits - 1);
          for (int x = 0; x < xmax; ++x) ss += row[x + xmin] * k[x];
          dst[xx] = clip8(ss);
        }
      }
    across = std::move(out);
    cur = &across;
  }
  if (!vertical) return across;
  Image out{cur->channels, height, cur->width, {}};
  out.pixels.resize(static_cast<size_t>(out.channels) * height * cur->width);
  for (int c = 0; c < cur->channels; ++c)
    for (int yy = 0; yy < height; ++yy) {
      const int ymin = cv.bounds[2 * yy], ymax = cv.bounds[2 * yy + 1];
      const int32_t* k = cv.k.data() + static_cast<size_t>(yy) * cv.ksize;
      const uint8_t* plane = cur->pixels.data() + static_cast<size_t>(c) * cur->height * cur->width;
      uint8_t* dst = out.pixels.data() + (static_cast<size_t>(c) * height + yy) * cur->width;
      for (int xx = 0; xx < cur->width; ++xx) {
        int32_t ss = 1 << (kPrecisionBits - 1);
        for (int y = 0; y < ymax; ++y) ss += plane[static_cast<size_t>(y + ymin) * cur->width + xx] * k[y];
        dst[xx] = clip8(ss);
      }
    }
  return out;
}

Image resize_nearest(const Image& in, int height, int width) {
  check(height > 0 && width > 0, "resize to " + std::to_string(width) + "x" + std::to_string(height));
  // PIL's ImagingScaleAffine: source coordinates stepped in double from half a step, truncated.
  const double x_step = static_cast<double>(in.width) / width, y_step = static_cast<double>(in.height) / height;
  std::vector<int> columns(static_cast<size_t>(width));
  double x_at = x_step * 0.5;
  for (int& column : columns) {
    column = std::min(static_cast<int>(x_at), in.width - 1);
    x_at += x_step;
  }
  Image out{in.channels, height, width, {}};
  out.pixels.resize(static_cast<size_t>(in.channels) * height * width);
  double y_at = y_step * 0.5;
  for (int y = 0; y < height; ++y, y_at += y_step) {
    const int sy = std::min(static_cast<int>(y_at), in.height - 1);
    for (int c = 0; c < in.channels; ++c) {
      const uint8_t* src = in.pixels.data() + (static_cast<size_t>(c) * in.height + sy) * in.width;
      uint8_t* dst = out.pixels.data() + (static_cast<size_t>(c) * height + y) * width;
      for (int x = 0; x < width; ++x) dst[x] = src[columns[static_cast<size_t>(x)]];
    }
  }
  return out;
}

Image resize_shorter_side(const Image& in, int size, Resample resample) {
  check(size > 0, "--resize must be positive");
  const int64_t h = in.height, w = in.width;
  const int64_t shorter = std::min(h, w), longer = std::max(h, w);
  // Python's int(size * long / short): the true quotient, rounded to a double, truncated.
  const int new_long = static_cast<int>(static_cast<double>(size * longer) / static_cast<double>(shorter));
  const int new_h = w <= h ? new_long : size, new_w = w <= h ? size : new_long;
  if (new_h == in.height && new_w == in.width) return in;
  return resample == Resample::Nearest ? resize_nearest(in, new_h, new_w) : resize_bilinear(in, new_h, new_w);
}

Image center_crop(const Image& in, int size, uint8_t fill) {
  check(size > 0, "--crop must be positive");
  // torchvision pads a smaller image (left/top get the floor of half the difference), then crops.
  const int pad_left = size > in.width ? (size - in.width) / 2 : 0;
  const int pad_top = size > in.height ? (size - in.height) / 2 : 0;
  const int padded_w = in.width + (size > in.width ? size - in.width : 0);
  const int padded_h = in.height + (size > in.height ? size - in.height : 0);
  auto offset = [](int d) { return d / 2 + ((d & 1) && ((d / 2) & 1) ? 1 : 0); };  // round(d / 2.0), halves to even
  const int top = offset(padded_h - size) - pad_top, left = offset(padded_w - size) - pad_left;
  Image out{in.channels, size, size, {}};
  out.pixels.assign(static_cast<size_t>(in.channels) * size * size, fill);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < size; ++y) {
      const int sy = y + top;
      if (sy < 0 || sy >= in.height) continue;
      for (int x = 0; x < size; ++x) {
        const int sx = x + left;
        if (sx >= 0 && sx < in.width)
          out.pixels[(static_cast<size_t>(c) * size + y) * size + x] =
              in.pixels[(static_cast<size_t>(c) * in.height + sy) * in.width + sx];
      }
    }
  return out;
}

}  // namespace octet
