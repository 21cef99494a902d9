// UpsampleBilinear on the CPU, separably and exactly: per output row, its two
// input rows blended into int16 (weights summing to 2 x factor: at most
// 128 x 255), then per output pixel its two blended pixels into int32, divided
// back by requantize_by_shift as the int8 reference does. Every inner loop
// runs along contiguous channels, which the compiler vectorizes.
#include <vector>

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
  const int64_t rows = a.batch * out.h, channels = in.c, row_values = int64_t{in.w} * channels;
  std::vector<ops::BilinearTaps> columns;
  for (int ox = 0; ox < out.w; ++ox) columns.push_back(ops::bilinear_taps(ox, across, in.w));
  parallel_for(rows, rows * out.w * channels >= kMinParallelWork, [&](int64_t r) {
    thread_local std::vector<int16_t> blended;
    blended.resize(static_cast<size_t>(row_values));
    const int64_t b = r / out.h;
    const ops::BilinearTaps ty = ops::bilinear_taps(static_cast<int>(r % out.h), down, in.h);
    const int8_t* upper = a.inputs[0] + (b * in.h + ty.first) * row_values;
    const int8_t* lower = a.inputs[0] + (b * in.h + ty.second) * row_values;
    const int32_t wu = ty.first_weight, wl = ty.second_weight;
    int16_t* v = blended.data();
    for (int64_t k = 0; k < row_values; ++k)
      v[k] = static_cast<int16_t>(wu * (upper[k] - zero_point) + wl * (lower[k] - zero_point));
    int8_t* y = a.y + r * out.w * channels;
    for (const ops::BilinearTaps& tx : columns) {
      const int16_t* left = v + tx.first * channels;
      const int16_t* right = v + tx.second * channels;
      const int32_t wleft = tx.first_weight, wright = tx.second_weight;
      for (int64_t c = 0; c < channels; ++c)
        y[c] = static_cast<int8_t>(requantize_by_shift(wleft * left[c] + wright * right[c], shift, zero_point));
      y += channels;
    }
  });
}
}  // namespace

extern const Kernel upsample_bilinear_kernel = {Op::UpsampleBilinear, "upsample-bilinear", KernelPath::Reference,
                                                runs_every_node, nullptr, run};

}  // namespace octet::cpu
