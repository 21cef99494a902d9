// GlobalAvgPool on the CPU: each channel's int32 plane sum, requantized. The
// sums of a block of channels are taken one pixel at a time over
// restrict-qualified adjacent bytes, so the loop vectorizes (int8 pointers may
// alias the sums otherwise); images x channel blocks are shared between threads.
#include <algorithm>
#include <vector>

#include "common/requantize.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
constexpr int64_t kChannelBlock = 256;  // its sums stay in L1

void add_pixel(int32_t* __restrict sum, const int8_t* __restrict pixel, int64_t n) {
  for (int64_t i = 0; i < n; ++i) sum[i] += pixel[i];
}

void run(const KernelArgs& a) {
  const ActShape in = a.node.input();
  const int64_t c = in.c, plane = int64_t(in.h) * in.w, blocks = (c + kChannelBlock - 1) / kChannelBlock;
  const int32_t multiplier = a.node.quant().multiplier.data[0], shift = a.node.quant().shift.data[0];
  const int32_t zero_in = a.node.input_zero_point(), zero_out = a.node.quant().zero_point;
  const int8_t* x = a.inputs[0];
  const auto make_sums = [] { return std::vector<int32_t>(kChannelBlock); };
  parallel_for(a.batch * blocks, a.batch * plane * c >= kMinParallelWork, make_sums,
               [&](int64_t task, std::vector<int32_t>& sum) {
                 const int64_t b = task / blocks, first = task % blocks * kChannelBlock;
                 const int64_t n = std::min(kChannelBlock, c - first);
                 std::fill(sum.begin(), sum.end(), 0);
                 for (int64_t p = 0; p < plane; ++p) add_pixel(sum.data(), x + (b * plane + p) * c + first, n);
                 for (int64_t ch = 0; ch < n; ++ch)
                   a.y[b * c + first + ch] = static_cast<int8_t>(requantize(
                       static_cast<int32_t>(sum[ch] - zero_in * plane), multiplier, 0, 0, shift, -128, zero_out));
               });
}
}  // namespace

extern const Kernel global_avg_pool_kernel = {Op::GlobalAvgPool, "global_avg_pool", KernelPath::Reference,
                                              runs_every_node, nullptr, run};

}  // namespace octet::cpu
