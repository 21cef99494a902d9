// Upsample on the CPU: each NHWC input row written once, its pixels repeated
// across, into the first of its output rows, then that row copied into the
// others it is repeated down.
#include <cstring>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int64_t down = n.stride, across = upsample_across(n), pixel = in.c, out_row = int64_t{out.w} * pixel;
  const int64_t rows = a.batch * in.h;
  parallel_for(rows, rows * down * out_row >= kMinParallelWork, [&](int64_t r) {
    const int8_t* x = a.inputs[0] + r * in.w * pixel;
    int8_t* y = a.y + r * down * out_row;
    for (int64_t ix = 0; ix < in.w; ++ix)
      for (int64_t k = 0; k < across; ++k) std::memcpy(y + (ix * across + k) * pixel, x + ix * pixel, pixel);
    for (int64_t k = 1; k < down; ++k) std::memcpy(y + k * out_row, y, static_cast<size_t>(out_row));
  });
}
}  // namespace

extern const Kernel upsample_kernel = {Op::Upsample, "upsample", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
