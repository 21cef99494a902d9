// Where a thread of a per-pixel kernel works. The grouped convolution and
// the pools give each thread a run of stored channels of one output pixel,
// numbered pixel-major (NHWC order); the thread finds its pixel by division.
// A GPU divides 64-bit integers in software, several times slower than 32-bit
// ones, so the division is 32-bit wherever every thread's number fits (every
// network met so far). Plain C++ with host+device functions.
#pragma once

#include <cstdint>

#include "common/requantize.h"

namespace octet::cuda {

struct PixelItem {
  int64_t pixel, b;  // pixel: its index over the batch, b * out_h * out_w + oy * out_w + ox
  int oy, ox, run;   // run: which of the pixel's runs of channels
};

// The division itself, in the integer type Index.
template <typename Index>
OCTET_HOST_DEVICE PixelItem pixel_item_in(int out_h, int out_w, int runs, Index item) {
  const Index pixel = item / static_cast<Index>(runs), rows = pixel / static_cast<Index>(out_w);
  return {static_cast<int64_t>(pixel), static_cast<int64_t>(rows / static_cast<Index>(out_h)),
          static_cast<int>(rows % static_cast<Index>(out_h)), static_cast<int>(pixel % static_cast<Index>(out_w)),
          static_cast<int>(item % static_cast<Index>(runs))};
}

// Thread `item` of `items` = batch x out_h x out_w x runs.
OCTET_HOST_DEVICE PixelItem pixel_item(int64_t items, int out_h, int out_w, int runs, int64_t item) {
  if (items <= int64_t(UINT32_MAX)) return pixel_item_in(out_h, out_w, runs, static_cast<uint32_t>(item));
  return pixel_item_in(out_h, out_w, runs, item);
}

}  // namespace octet::cuda
