// GPTQ's input statistics of a conv whose groups read one input channel each
// (a depthwise conv): H = sum x x^T per channel over its kernel taps, all
// channels at once. The general path (gptq.cpp) gathers each group's patches
// and runs one small product per group, which on MobileNetV2 cost more than
// the products themselves; here the taps of every channel are read in place
// from the NHWC activation and each H entry is the same chain of fused
// multiply-adds in row order, so the bits are the same.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace octet {

// Whether `node` is a conv whose every group reads one input channel.
inline bool one_channel_per_group(const Node& node, const ActShape& in) {
  return node.op == Op::Conv2d && node.groups > 1 && in.c == node.groups;
}

// Adds to each channel's H (`hessians[c]`, taps x taps; only the lower
// triangle and the diagonal are written) the receptive fields of `act`'s
// output pixels first_row, first_row + stride, ... (`picked` of them, counted
// over the batch's im2col rows), in that order.
void add_depthwise_gram(const Node& node, const ActShape& in, const ActShape& out, const float* act, int64_t first_row,
                        int64_t stride, int64_t picked, std::vector<Eigen::MatrixXf>& hessians);

}  // namespace octet
