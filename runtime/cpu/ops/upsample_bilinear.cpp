// UpsampleBilinear on the CPU: per NHWC output pixel, its four input pixels'
// stored values weighted (graph/ops/upsample_bilinear.h), channel by channel,
// divided back by common/requantize.h as the int8 reference does.
#include "common/requantize.h"
#include "graph/ops/upsample_bilinear.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int down = n.stride, across = upsample_across(n);
  const int shift = ops::power_of_two_exponent(4 * down * across);
  const int32_t zero_point = a.node.input_zero_point();
  const int64_t rows = a.batch * out.h, channels = in.c;
  parallel_for(rows, rows * out.w * channels >= kMinParallelWork, [&](int64_t r) {
    const int64_t b = r / out.h;
    const ops::BilinearTaps ty = ops::bilinear_taps(static_cast<int>(r % out.h), down, in.h);
    const int8_t* upper = a.inputs[0] + (b * in.h + ty.first) * in.w * channels;
    const int8_t* lower = a.inputs[0] + (b * in.h + ty.second) * in.w * channels;
    int8_t* y = a.y + r * out.w * channels;
    for (int ox = 0; ox < out.w; ++ox, y += channels) {
      const ops::BilinearTaps tx = ops::bilinear_taps(ox, across, in.w);
      const int32_t w00 = ty.first_weight * tx.first_weight, w01 = ty.first_weight * tx.second_weight;
      const int32_t w10 = ty.second_weight * tx.first_weight, w11 = ty.second_weight * tx.second_weight;
      const int8_t *p00 = upper + tx.first * channels, *p01 = upper + tx.second * channels;
      const int8_t *p10 = lower + tx.first * channels, *p11 = lower + tx.second * channels;
      for (int64_t c = 0; c < channels; ++c) {
        const int32_t sum = w00 * (p00[c] - zero_point) + w01 * (p01[c] - zero_point) +
                            w10 * (p10[c] - zero_point) + w11 * (p11[c] - zero_point);
        y[c] = static_cast<int8_t>(requantize(sum, 1, 0, 0, shift, -128, zero_point));
      }
    }
  });
}
}  // namespace

extern const Kernel upsample_bilinear_kernel = {Op::UpsampleBilinear, "upsample-bilinear", KernelPath::Reference,
                                                runs_every_node, nullptr, run};

}  // namespace octet::cpu
