// DepthToSpace on the CPU: each NHWC output row gathered from one input row,
// output channel c at block offset k from input channel c * block^2 + k.
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const int64_t block = a.node.node().stride, area = block * block, rows = a.batch * out.h;
  parallel_for(rows, rows * out.w * out.c >= kMinParallelWork, [&](int64_t r) {
    const int64_t b = r / out.h, oy = r % out.h;
    const int8_t* x = a.inputs[0] + (b * in.h + oy / block) * in.w * in.c + oy % block * block;
    int8_t* y = a.y + r * out.w * out.c;
    for (int64_t ox = 0; ox < out.w; ++ox, y += out.c) {
      const int8_t* pixel = x + ox / block * in.c + ox % block;
      for (int64_t c = 0; c < out.c; ++c) y[c] = pixel[c * area];
    }
  });
}
}  // namespace

extern const Kernel depth_to_space_kernel = {Op::DepthToSpace, "depth_to_space", KernelPath::Reference,
                                             runs_every_node, nullptr, run};

}  // namespace octet::cpu
