// cuda-imma's folded input (space-to-depth, as MLPerf's ResNet-50 first
// layers do). An image of up to 4 channels makes the implicit GEMM read its
// first layer's taps as 4-byte words: ResNet-50's 7x7/2 conv1 ran at 72 TOPS
// on an H200, where its other layers reach 300-600. Stored folded, stored
// pixel (Y, X) holds the source pixels (2Y + r, 2X + s), r, s in {0, 1}, 4
// bytes each at byte (2r + s) x 4: 16 channels, one 16-byte vector per tap.
// A stride-2 conv over the image is a stride-1 conv over the folded one with
// the same products (its extra taps have zero weights), so the same int32
// sums. Plain C++, checked on any machine.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace octet::cuda {

constexpr int kFold = 2;              // source pixels per stored pixel along each axis
constexpr int kFoldedChannels = 16;  // stored channels: 2 x 2 source pixels of 4 bytes
constexpr int kFoldedSourceBytes = 4;

// Whether cuda-imma stores value `node` folded: the graph's input, of at most
// 4 channels, read only (as their first input) by dense convs of stride 2.
bool stores_folded(const Graph& g, const std::vector<ActShape>& shapes, int node);

// A folded axis of `size` source pixels.
constexpr int folded_size(int size) { return (size + kFold - 1) / kFold; }

// A stride-2 conv (kernel, padding) as the stride-1 conv over the folded
// input: its output pixel o reads folded pixels o - padding + a, a < kernel,
// and folded tap a, part r holds the original tap 2a + r - shift (zero outside
// the original kernel). The output size is the original conv's.
struct FoldedConv {
  int kernel, padding, shift;
};
FoldedConv folded_conv(int kernel, int padding);

// Weight rows [out_c][kernel x kernel taps][in_c] (NHWC reading order) as the
// folded conv's [out_c][folded taps][kFoldedChannels].
std::vector<int8_t> fold_weight_rows(const int8_t* rows, int out_c, int kernel, int padding, int in_c);

// Byte offset, within one sample's folded value, of source pixel (y, x),
// channel c (< 4), for an image `width` pixels wide.
constexpr int64_t folded_offset(int y, int x, int c, int width) {
  return (int64_t(y / kFold) * folded_size(width) + x / kFold) * kFoldedChannels +
         ((y % kFold) * kFold + x % kFold) * kFoldedSourceBytes + c;
}

}  // namespace octet::cuda
