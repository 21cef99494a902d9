// The part of a Pad2d's output that its input fills (graph/ops/pad2d.cpp),
// shared by the float op and the CPU kernel: the rest is zeros. With
// negative sides (a crop) the input's rows and columns outside it are dropped.
#pragma once

#include <algorithm>

#include "graph/graph.h"

namespace octet::ops {

struct PadOverlap {
  int first_row, end_row, first_column, end_column;  // of the output; input row = output row - pad_top
  int columns() const { return end_column - first_column; }
};

inline PadOverlap pad_overlap(const Node& n, const ActShape& in, const ActShape& out) {
  return {std::max(0, n.pad_top), std::min(out.h, n.pad_top + in.h), std::max(0, n.pad_left),
          std::min(out.w, n.pad_left + in.w)};
}

}  // namespace octet::ops
