// AvgPool2d on the CPU: each window's int32 sum, requantized by its count's
// multiplier. An output pixel's sums are taken for all its channels at once,
// one window pixel at a time (adjacent bytes: the loop vectorizes), less the
// input's zero point once per pixel inside the image (the padding adds
// nothing): the same sums as the reference's.
#include <vector>

#include "common/requantize.h"
#include "graph/ops/pool2d.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const Node& n = a.node.node();
  const PoolAxis down = pool_rows(n), across = pool_columns(n);
  const int c = in.c;
  const Int32Tensor& multipliers = a.node.quant().multiplier;
  const int32_t shift = a.node.quant().shift.data[0];
  const int32_t zero_in = a.node.input_zero_point(), zero_out = a.node.quant().zero_point;
  const int8_t* x = a.inputs[0];
  const int64_t rows = a.batch * out.h;
#pragma omp parallel if (share_work(a.batch * in.h * in.w * c >= kMinParallelWork))
  {
    std::vector<int32_t> sum(static_cast<size_t>(c));
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t b = row / out.h;
      const ops::PoolSpan sy = ops::pool_span(static_cast<int>(row % out.h), in.h, down);
      for (int ox = 0; ox < out.w; ++ox) {
        const ops::PoolSpan sx = ops::pool_span(ox, in.w, across);
        std::fill(sum.begin(), sum.end(), 0);
        for (int iy = sy.begin; iy < sy.end; ++iy)
          for (int ix = sx.begin; ix < sx.end; ++ix) {
            const int8_t* pixel = x + ((b * in.h + iy) * in.w + ix) * c;
            for (int ch = 0; ch < c; ++ch) sum[ch] += pixel[ch];
          }
        const int32_t offset = zero_in * (sy.end - sy.begin) * (sx.end - sx.begin);
        const int32_t multiplier = ops::avg_pool_multiplier(multipliers, ops::pool_count(sy, sx, n));
        int8_t* y = a.y + (row * out.w + ox) * c;
        for (int ch = 0; ch < c; ++ch)
          y[ch] = static_cast<int8_t>(requantize(sum[ch] - offset, multiplier, 0, 0, shift, -128, zero_out));
      }
    }
  }
}
}  // namespace

extern const Kernel avg_pool2d_kernel = {Op::AvgPool2d, "avg_pool2d", KernelPath::Reference, runs_every_node, nullptr,
                                         run};

}  // namespace octet::cpu
