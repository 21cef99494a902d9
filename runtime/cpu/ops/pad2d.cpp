// Pad2d on the CPU: each NHWC image row copied between zero columns, below
// zero rows; with negative sides, the rows' part that stays.
#include <cstring>

#include "graph/ops/pad2d.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const ops::PadOverlap o = ops::pad_overlap(n, in, out);
  if (n.pad_top > 0 || n.pad_left > 0 || n.pad_bottom > 0 || n.pad_right > 0)
    std::memset(a.y, a.node.input_zero_point(), static_cast<size_t>(a.batch * out.h * out.w * out.c));  // a real 0
  for (int64_t b = 0; b < a.batch; ++b)
    for (int oy = o.first_row; oy < o.end_row; ++oy)
      std::memcpy(a.y + ((b * out.h + oy) * out.w + o.first_column) * out.c,
                  a.inputs[0] + ((b * in.h + oy - n.pad_top) * in.w + o.first_column - n.pad_left) * in.c,
                  static_cast<size_t>(int64_t{o.columns()} * in.c));
}
}  // namespace

extern const Kernel pad2d_kernel = {Op::Pad2d, "pad2d", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
