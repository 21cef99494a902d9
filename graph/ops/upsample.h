// Upsample's pixel map (graph/ops/upsample.cpp): each output pixel reads one
// input pixel, by whole factors or to a size.
#pragma once

#include <cstdint>

namespace octet::ops {

// The most pixels a side of an Upsample to a size (Node::height, width) may have.
constexpr int kMostNearestSide = 65536;

// The input pixel that output pixel o reads along an axis of `in` pixels resized to `out`: floor(o x in / out),
// where F.interpolate(size=..., mode="nearest") and ONNX's Resize (asymmetric, floor) place it, computed exactly
// (they compute it in floating point). By a whole factor f (out = in x f): o / f.
inline int nearest_source(int64_t o, int64_t in, int64_t out) { return static_cast<int>(o * in / out); }

}  // namespace octet::ops
