// UpsampleBilinear on the CPU, separably and exactly: per output row, its two
// input rows blended into int16 (weights summing to 2 x factor: at most
// 128 x 255), then per output pixel its two blended pixels into int32, divided
// back by requantize_by_shift as the int8 reference does. The blends
// (bilinear_simd.h) are portable here, and AVX2 where the CPU has it.
#include <vector>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/ops/upsample_bilinear.h"
#include "runtime/cpu/bilinear_simd.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void blend_rows(const int8_t* upper, const int8_t* lower, int64_t count, int32_t upper_weight, int32_t lower_weight,
                int32_t zero_point, int16_t* v) {
  for (int64_t k = 0; k < count; ++k)
    v[k] = static_cast<int16_t>(upper_weight * (upper[k] - zero_point) + lower_weight * (lower[k] - zero_point));
}

void blend_pixels(const int16_t* v, const ColumnTaps* columns, int64_t count, int64_t channels, int32_t shift,
                  int32_t zero_point, int8_t* y) {
  for (int64_t x = 0; x < count; ++x, y += channels) {
    const ColumnTaps& t = columns[x];
    for (int64_t c = 0; c < channels; ++c)
      y[c] = static_cast<int8_t>(requantize_by_shift(t.left_weight * v[t.left + c] + t.right_weight * v[t.right + c],
                                                     shift, zero_point));
  }
}

const BilinearBlends portable_blends = {blend_rows, blend_pixels};

void run_with(const KernelArgs& a, const BilinearBlends& blends) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int down = n.stride, across = upsample_across(n);
  const int shift = ops::power_of_two_exponent(4 * down * across);
  const int32_t zero_point = a.node.input_zero_point();
  const int64_t rows = a.batch * out.h, channels = in.c, row_values = int64_t{in.w} * channels;
  std::vector<ColumnTaps> columns;
  for (int ox = 0; ox < out.w; ++ox) {
    const ops::BilinearTaps t = ops::bilinear_taps(ox, across, in.w);
    columns.push_back({t.first * channels, t.second * channels, t.first_weight, t.second_weight});
  }
  parallel_for(rows, rows * out.w * channels >= kMinParallelWork, [&](int64_t r) {
    thread_local std::vector<int16_t> blended;
    blended.resize(static_cast<size_t>(row_values));
    const int64_t b = r / out.h;
    const ops::BilinearTaps ty = ops::bilinear_taps(static_cast<int>(r % out.h), down, in.h);
    blends.rows(a.inputs[0] + (b * in.h + ty.first) * row_values, a.inputs[0] + (b * in.h + ty.second) * row_values,
                row_values, ty.first_weight, ty.second_weight, zero_point, blended.data());
    blends.pixels(blended.data(), columns.data(), out.w, channels, shift, zero_point, a.y + r * out.w * channels);
  });
}

void run(const KernelArgs& a) { run_with(a, portable_blends); }

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  run_with(a, avx2::bilinear_blends);
#else
  fail("upsample-bilinear-avx2: this build has no AVX2 kernels");
#endif
}
}  // namespace

extern const Kernel upsample_bilinear_avx2_kernel = {Op::UpsampleBilinear, "upsample-bilinear-avx2", KernelPath::Avx2,
                                                     runs_every_node_on_avx2, nullptr, run_avx2};
extern const Kernel upsample_bilinear_kernel = {Op::UpsampleBilinear, "upsample-bilinear", KernelPath::Reference,
                                                runs_every_node, nullptr, run};

}  // namespace octet::cpu
