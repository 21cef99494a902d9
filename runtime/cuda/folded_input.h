// How cuda-imma stores an image of up to 4 channels that only first-layer
// convs read. Stored plainly (4 channels per tap, padded to 16 per pixel), the
// implicit GEMM copies such a conv's taps 4 bytes at a time: ResNet-50's
// 7x7/2 conv1 ran at 72 TOPS and CIFAR ResNet-18's 3x3 conv1 at 16 on an H200,
// where their other layers reach 300-600. Folded, every tap is 16-byte vectors:
//  - space to depth (readers of stride 2, as MLPerf's ResNet-50s): stored
//    pixel (Y, X) holds source pixels (2Y + r, 2X + s), r, s in {0, 1}, 4
//    bytes each at byte (2r + s) x 4. The stride-2 conv is a stride-1 conv
//    over it, its kernel ceil((kernel + shift) / 2) with zero weights on the
//    taps outside the original kernel;
//  - patches (readers of stride 1, one kernel of 2-4): stored pixel (oy, ox)
//    holds the conv's whole window for output (oy, ox), tap t's 4 bytes at
//    byte 4t, padded to 16 (3x3: 48 bytes). The conv is a 1x1 conv over it.
// The same products either way, so the same int32 sums and bits. Plain C++,
// checked on any machine.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "runtime/cuda/quantize_input_kernel.h"

namespace octet::cuda {

constexpr int kSourceBytes = 4;          // bytes of one source pixel in a folded value (channels <= 4)
constexpr int kSpaceToDepthChannels = 16;  // 2 x 2 source pixels

struct ImageFold {
  enum Kind : uint8_t { kNone, kSpaceToDepth, kPatches };
  Kind kind = kNone;
  int height = 0, width = 0, channels = 0;  // the source image
  int kernel = 0, padding = 0;              // kPatches: the stride-1 conv whose windows are stored
  // The input kernel's shape for `batch` images (quantize_input_kernel.h),
  // which says how many stored pixels each fold has.
  SpaceToDepthInput space_to_depth_input(int64_t batch) const;
  PatchInput patch_input(int64_t batch) const;
  // Stored pixels of one sample along each axis, and bytes per stored pixel.
  int stored_h() const;
  int stored_w() const;
  int stored_c() const;
  // The byte of one sample's stored value holding source pixel (y, x)'s
  // channel c (one such byte, for patches).
  int64_t offset_of(int y, int x, int c) const;
};

// How cuda-imma stores value `node`: folded where it is the graph's input of
// at most 4 channels and every reader is a dense conv (reading it as its first
// input) of stride 2, or of stride 1 with one kernel of 2-4 and one padding;
// else kNone.
ImageFold image_fold(const Graph& g, const std::vector<ActShape>& shapes, int node);

// A reader of a folded image as the implicit GEMM runs it: over in_h x in_w
// stored pixels, with tap_channels bytes per tap.
struct FoldedConv {
  int in_h, in_w, kernel, stride, padding, tap_channels;
};
FoldedConv folded_conv(const ImageFold& f, const Node& conv);

// The conv's weight rows [out_c][kernel x kernel taps][in_c] (NHWC reading
// order) as the folded conv's [out_c][its taps][tap_channels].
std::vector<int8_t> fold_weight_rows(const ImageFold& f, const Node& conv, const int8_t* rows, int in_c);

}  // namespace octet::cuda
