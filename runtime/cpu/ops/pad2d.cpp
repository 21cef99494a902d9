// Pad2d on the CPU: each NHWC image row copied between zero columns, below
// zero rows.
#include <cstring>

#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int64_t in_row = int64_t{in.w} * in.c, out_row = int64_t{out.w} * out.c;
  std::memset(a.y, a.node.input_zero_point(), static_cast<size_t>(a.batch * out.h * out_row));  // a real 0
  for (int64_t b = 0; b < a.batch; ++b)
    for (int iy = 0; iy < in.h; ++iy)
      std::memcpy(a.y + (b * out.h + iy + n.pad_top) * out_row + int64_t{n.pad_left} * out.c,
                  a.inputs[0] + (b * in.h + iy) * in_row, static_cast<size_t>(in_row));
}
}  // namespace

extern const Kernel pad2d_kernel = {Op::Pad2d, "pad2d", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
