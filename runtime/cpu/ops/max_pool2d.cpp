// MaxPool2d on the CPU: the largest int8 value of each window.
#include <algorithm>

#include "graph/ops/pool2d.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const Node& n = a.node.node();
  const int c = in.c;
  parallel_for(a.batch, a.batch * in.h * in.w * c >= kMinParallelWork, [&](int64_t b) {
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox) {
        const ops::PoolSpan sy = ops::pool_span(oy, in.h, n), sx = ops::pool_span(ox, in.w, n);
        int8_t* dst = a.y + ((b * out.h + oy) * out.w + ox) * c;
        std::fill(dst, dst + c, static_cast<int8_t>(-128));
        for (int iy = sy.begin; iy < sy.end; ++iy)
          for (int ix = sx.begin; ix < sx.end; ++ix) {
            const int8_t* src = a.inputs[0] + ((b * in.h + iy) * in.w + ix) * c;
            for (int ch = 0; ch < c; ++ch) dst[ch] = std::max(dst[ch], src[ch]);
          }
      }
  });
}
}  // namespace

extern const Kernel max_pool2d_kernel = {Op::MaxPool2d, "max_pool2d", KernelPath::Reference, runs_every_node, nullptr,
                                         run};

}  // namespace octet::cpu
