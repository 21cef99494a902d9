// DepthToSpace on the CPU: each NHWC output row gathered from one input row,
// output channel c at block offset k from input channel c * block^2 + k. Per
// input pixel, the `block` output pixels of one output row take each channel's
// `block` adjacent values: with the block a constant (2, 3, 4), the compiler
// vectorizes that strided read over the channels.
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
// Input pixel `src` (its values of block row i), its `block` output pixels at `dst`, each of `channels` values.
template <int kBlock>
void spread_pixel(const int8_t* __restrict src, int64_t channels, int8_t* __restrict dst) {
  for (int64_t c = 0; c < channels; ++c)
    for (int j = 0; j < kBlock; ++j) dst[j * channels + c] = src[c * kBlock * kBlock + j];
}

void spread_pixel_any(const int8_t* src, int64_t channels, int64_t block, int8_t* dst) {
  for (int64_t j = 0; j < block; ++j)
    for (int64_t c = 0; c < channels; ++c) dst[j * channels + c] = src[c * block * block + j];
}

void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const int64_t block = a.node.node().stride, rows = a.batch * out.h;
  parallel_for(rows, rows * out.w * out.c >= kMinParallelWork, [&](int64_t r) {
    const int64_t b = r / out.h, oy = r % out.h;
    const int8_t* x = a.inputs[0] + (b * in.h + oy / block) * in.w * in.c + oy % block * block;
    int8_t* y = a.y + r * out.w * out.c;
    for (int64_t ix = 0; ix < in.w; ++ix, x += in.c, y += block * out.c) {
      if (block == 2)
        spread_pixel<2>(x, out.c, y);
      else if (block == 3)
        spread_pixel<3>(x, out.c, y);
      else if (block == 4)
        spread_pixel<4>(x, out.c, y);
      else
        spread_pixel_any(x, out.c, block, y);
    }
  });
}
}  // namespace

extern const Kernel depth_to_space_kernel = {Op::DepthToSpace, "depth_to_space", KernelPath::Reference,
                                             runs_every_node, nullptr, run};

}  // namespace octet::cpu
