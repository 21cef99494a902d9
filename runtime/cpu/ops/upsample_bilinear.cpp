// UpsampleBilinear on the CPU, separably and exactly: per output row, its two
// input rows blended, then per output pixel its two blended pixels into int32,
// divided back by the weights' sum as the int8 reference does. Where that sum
// is a power of two and a row's weights sum to at most 128 (pixel centres
// aligned, factors powers of two), the rows blend into int16 and the division
// is requantize_by_shift; otherwise (corners aligned, other sizes) the rows
// blend into int32 and requantize_by_division divides. The blends
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

void blend_wide_rows(const int8_t* upper, const int8_t* lower, int64_t count, int32_t upper_weight,
                     int32_t lower_weight, int32_t zero_point, int32_t* v) {
  for (int64_t k = 0; k < count; ++k)
    v[k] = upper_weight * (upper[k] - zero_point) + lower_weight * (lower[k] - zero_point);
}

void divide_pixels(const int32_t* v, const ColumnTaps* columns, int64_t count, int64_t channels, int32_t total,
                   int32_t zero_point, int8_t* y) {
  for (int64_t x = 0; x < count; ++x, y += channels) {
    const ColumnTaps& t = columns[x];
    for (int64_t c = 0; c < channels; ++c)
      y[c] = static_cast<int8_t>(
          requantize_by_division(t.left_weight * v[t.left + c] + t.right_weight * v[t.right + c], total, zero_point));
  }
}

const BilinearDivisions portable_divisions = {blend_wide_rows, divide_pixels};

// Whether the node's weights divide by a shift, its rows blend in int16 (255 x a row's weights) and its column
// weights are int16 (the AVX2 form's vpmaddwd): BilinearBlends, else BilinearDivisions.
bool blends_in_int16(const Node& n, const ActShape& in) {
  const int64_t row_span = ops::bilinear_span(ops::bilinear_rows(n, in.h));
  const int64_t column_span = ops::bilinear_span(ops::bilinear_columns(n, in.w));
  return row_span <= 128 && column_span <= 32767 && ops::power_of_two_exponent(row_span * column_span) >= 0;
}

void run_with(const KernelArgs& a, const BilinearBlends& blends, const BilinearDivisions& divisions) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const ops::BilinearAxis down = ops::bilinear_rows(n, in.h), across = ops::bilinear_columns(n, in.w);
  const auto total = static_cast<int32_t>(ops::bilinear_span(down) * ops::bilinear_span(across));
  const bool in_int16 = blends_in_int16(n, in);
  const int32_t zero_point = a.node.input_zero_point();
  const int64_t rows = a.batch * out.h, channels = in.c, row_values = int64_t{in.w} * channels;
  std::vector<ColumnTaps> columns;
  for (int ox = 0; ox < out.w; ++ox) {
    const ops::BilinearTaps t = ops::bilinear_taps(ox, across);
    columns.push_back({t.first * channels, t.second * channels, t.first_weight, t.second_weight});
  }
  parallel_for(rows, rows * out.w * channels >= kMinParallelWork, [&](int64_t r) {
    const int64_t b = r / out.h;
    const ops::BilinearTaps ty = ops::bilinear_taps(static_cast<int>(r % out.h), down);
    const int8_t* upper = a.inputs[0] + (b * in.h + ty.first) * row_values;
    const int8_t* lower = a.inputs[0] + (b * in.h + ty.second) * row_values;
    int8_t* y = a.y + r * out.w * channels;
    if (in_int16) {
      thread_local std::vector<int16_t> blended;
      blended.resize(static_cast<size_t>(row_values));
      blends.rows(upper, lower, row_values, ty.first_weight, ty.second_weight, zero_point, blended.data());
      blends.pixels(blended.data(), columns.data(), out.w, channels, ops::power_of_two_exponent(total), zero_point,
                    y);
    } else {
      thread_local std::vector<int32_t> blended;
      blended.resize(static_cast<size_t>(row_values));
      divisions.rows(upper, lower, row_values, ty.first_weight, ty.second_weight, zero_point, blended.data());
      divisions.pixels(blended.data(), columns.data(), out.w, channels, total, zero_point, y);
    }
  });
}

void run(const KernelArgs& a) { run_with(a, portable_blends, portable_divisions); }

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  run_with(a, avx2::bilinear_blends, avx2::bilinear_divisions);
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
