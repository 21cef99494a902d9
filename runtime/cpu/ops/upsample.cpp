// Upsample on the CPU: each NHWC input row written once, its pixels repeated
// across, into the first of its output rows, then that row copied into the
// others it is repeated down. To a size: each output row gathered from the
// input row it reads, pixel by pixel (graph/ops/upsample.h).
#include <cstring>
#include <vector>

#include "graph/ops/upsample.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run_to_size(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const int64_t pixel = in.c, out_row = int64_t{out.w} * pixel;
  std::vector<int64_t> column(static_cast<size_t>(out.w));  // each output pixel's input pixel, in bytes
  for (int ox = 0; ox < out.w; ++ox) column[static_cast<size_t>(ox)] = ops::nearest_source(ox, in.w, out.w) * pixel;
  const int64_t rows = a.batch * out.h;
  parallel_for(rows, rows * out_row >= kMinParallelWork, [&](int64_t r) {
    const int64_t image = r / out.h, iy = ops::nearest_source(r % out.h, in.h, out.h);
    const int8_t* x = a.inputs[0] + (image * in.h + iy) * in.w * pixel;
    int8_t* y = a.y + r * out_row;
    for (int ox = 0; ox < out.w; ++ox) std::memcpy(y + ox * pixel, x + column[static_cast<size_t>(ox)], pixel);
  });
}

void run(const KernelArgs& a) {
  const Node& n = a.node.node();
  if (n.height) return run_to_size(a);
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
