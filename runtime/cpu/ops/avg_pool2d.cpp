// AvgPool2d on the CPU: each window's int32 sum, requantized.
#include "common/requantize.h"
#include "graph/ops/pool2d.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const Node& n = a.node.node();
  const int c = in.c;
  const int32_t multiplier = a.node.quant().multiplier.data[0], shift = a.node.quant().shift.data[0];
  const int32_t zero_in = a.node.input_zero_point(), zero_out = a.node.quant().zero_point;
  const int8_t* x = a.inputs[0];
#pragma omp parallel for if (a.batch * in.h * in.w * c >= kMinParallelWork)
  for (int64_t b = 0; b < a.batch; ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          const ops::PoolSpan sy = ops::pool_span(oy, in.h, n), sx = ops::pool_span(ox, in.w, n);
          int32_t sum = 0;
          for (int iy = sy.begin; iy < sy.end; ++iy)
            for (int ix = sx.begin; ix < sx.end; ++ix) sum += x[((b * in.h + iy) * in.w + ix) * c + ch] - zero_in;
          a.y[((b * out.h + oy) * out.w + ox) * c + ch] =
              static_cast<int8_t>(requantize(sum, multiplier, 0, 0, shift, -128, zero_out));
        }
}
}  // namespace

extern const Kernel avg_pool2d_kernel = {Op::AvgPool2d, "avg_pool2d", KernelPath::Reference, runs_every_node, nullptr,
                                         run};

}  // namespace octet::cpu
