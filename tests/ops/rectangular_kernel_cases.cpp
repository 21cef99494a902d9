#include "tests/ops/rectangular_kernel_cases.h"

#include <string>

#include "tests/ops/op_model.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

// Grouped and depthwise convs whose kernel is not square: a depthwise Conv1d
// (QuartzNet's and MatchboxNet's time-channel separable convs) is 1 x k on a
// 1-pixel-high image. Depthwise ones over whole blocks of 16 channels and
// partial ones, stride 2, dilation, padding past the short side, a residual,
// unsigned inputs; grouped ones with 8 and 3 channels a group, and one input
// channel with two outputs each (not depthwise).
void add_rectangular_grouped_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 7900;  // apart from the other cases' seeds, so that theirs keep their models
  struct Grouped {
    int64_t batch;
    int c, h, w, out_c, groups, kernel_h, kernel_w, stride, padding, dilation;
    bool residual, unsigned_input;
  };
  const Grouped convs[] = {
      {3, 48, 1, 20, 48, 48, 1, 5, 1, 0, 1, false, false},  {2, 40, 1, 17, 40, 40, 1, 3, 2, 0, 1, false, true},
      {2, 24, 9, 6, 24, 24, 5, 1, 1, 2, 1, true, false},    {2, 32, 3, 21, 32, 32, 1, 7, 1, 3, 2, false, true},
      {1, 64, 1, 40, 64, 64, 1, 9, 1, 0, 1, true, false},   {2, 32, 1, 15, 32, 4, 1, 3, 1, 0, 1, false, false},
      {3, 6, 7, 5, 10, 2, 3, 1, 1, 1, 1, false, false},     {2, 16, 1, 19, 32, 16, 1, 5, 2, 0, 1, false, false},
  };
  for (const Grouped& v : convs) {
    const uint64_t s = seed++;
    cases.push_back({"rect_grouped_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_g" +
                         std::to_string(v.groups) + "_k" + std::to_string(v.kernel_h) + "x" +
                         std::to_string(v.kernel_w) + "s" + std::to_string(v.stride) + "p" +
                         std::to_string(v.padding) + "d" + std::to_string(v.dilation) +
                         (v.residual ? "_residual" : "") + (v.unsigned_input ? "_uint8" : ""),
                     v.batch,
                     [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w, v.unsigned_input);
                       const int skip = v.residual ? m.conv_rect(x, v.out_c, v.kernel_h, v.kernel_w, v.stride,
                                                                 v.padding, false, -1, Requant::Typical, v.groups,
                                                                 v.dilation)
                                                   : -1;
                       m.conv_rect(x, v.out_c, v.kernel_h, v.kernel_w, v.stride, v.padding, true, skip,
                                   Requant::Typical, v.groups, v.dilation);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  }
}

}  // namespace

void add_rectangular_kernel_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 7000;  // apart from the other cases' seeds, so that theirs keep their models
  // 1xk and kx1 with padding below, at and beyond the short side's kernel
  // (taps outside on both sides), stride 2, dilation, channel counts that
  // do not divide by 4, a fused residual, extreme requantization.
  struct Rectangular {
    int64_t batch;
    int c, h, w, out_c, kernel_h, kernel_w, stride, padding, dilation;
    bool relu, residual;
    Requant requant = Requant::Typical;
  };
  const Rectangular convs[] = {
      {2, 16, 9, 9, 24, 1, 7, 1, 0, 1, true, false},      {2, 16, 9, 9, 24, 7, 1, 1, 0, 1, true, false},
      {3, 5, 8, 11, 17, 1, 7, 1, 3, 1, false, true},       {3, 5, 11, 8, 17, 7, 1, 1, 3, 1, false, true},
      {2, 12, 7, 7, 12, 1, 3, 1, 1, 1, true, true},        {2, 12, 7, 7, 12, 3, 1, 1, 1, 1, true, false},
      {4, 3, 10, 9, 10, 3, 5, 2, 1, 1, true, false},       {2, 33, 6, 13, 9, 5, 3, 2, 2, 1, false, false},
      {2, 8, 10, 14, 16, 1, 5, 1, 2, 2, true, false},      {1, 7, 14, 6, 13, 5, 1, 2, 1, 2, false, false},
      {2, 32, 8, 8, 32, 1, 7, 1, 3, 1, true, true, Requant::Extreme},
      {64, 4, 4, 4, 8, 2, 4, 1, 1, 1, false, false},
  };
  for (const Rectangular& v : convs) {
    const uint64_t s = seed++;
    cases.push_back({"rect_conv_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
                         std::to_string(v.kernel_h) + "x" + std::to_string(v.kernel_w) + "s" +
                         std::to_string(v.stride) + "p" + std::to_string(v.padding) + "d" +
                         std::to_string(v.dilation) + (v.relu ? "_relu" : "") + (v.residual ? "_residual" : "") +
                         (v.requant == Requant::Extreme ? "_extreme" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       const int skip = v.residual ? m.conv_rect(x, v.out_c, v.kernel_h, v.kernel_w, v.stride,
                                                                 v.padding, false, -1, Requant::Typical, 1, v.dilation)
                                                   : -1;
                       m.conv_rect(x, v.out_c, v.kernel_h, v.kernel_w, v.stride, v.padding, v.relu, skip, v.requant, 1,
                                   v.dilation);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  }
  add_rectangular_grouped_cases(cases);
  for (const int64_t batch : {1, 4}) {
    const uint64_t s = seed++;
    cases.push_back({"network_rectangular_" + shape_name(batch, 3, 16, 16), batch,
                     [s] { return quantize_random(random_rectangular_checkpoint(s), quick_quantize_options(), 32); },
                     CaseImages::Normalised});
  }
}

}  // namespace octet
