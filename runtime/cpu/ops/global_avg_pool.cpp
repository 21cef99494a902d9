// GlobalAvgPool on the CPU: each channel's int32 plane sum, requantized.
#include <vector>

#include "common/requantize.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape in = a.node.input();
  const int c = in.c;
  const int64_t plane = int64_t(in.h) * in.w;
  const int32_t multiplier = a.node.quant().multiplier.data[0], shift = a.node.quant().shift.data[0];
  const int32_t zero_in = a.node.input_zero_point(), zero_out = a.node.quant().zero_point;
  const int8_t* x = a.inputs[0];
  parallel_for(a.batch, a.batch * plane * c >= kMinParallelWork, [&](int64_t b) {
    std::vector<int32_t> sum(static_cast<size_t>(c), 0);
    for (int64_t p = 0; p < plane; ++p)
      for (int ch = 0; ch < c; ++ch) sum[ch] += x[(b * plane + p) * c + ch];
    for (int ch = 0; ch < c; ++ch)
      a.y[b * c + ch] = static_cast<int8_t>(
          requantize(static_cast<int32_t>(sum[ch] - zero_in * plane), multiplier, 0, 0, shift, -128, zero_out));
  });
}
}  // namespace

extern const Kernel global_avg_pool_kernel = {Op::GlobalAvgPool, "global_avg_pool", KernelPath::Reference,
                                              runs_every_node, nullptr, run};

}  // namespace octet::cpu
