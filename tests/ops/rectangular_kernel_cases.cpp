#include "tests/ops/rectangular_kernel_cases.h"

#include <string>

#include "tests/ops/op_model.h"
#include "tests/support/random_model.h"

namespace octet {

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
                                                                 v.padding, false, -1, Requant::Typical, v.dilation)
                                                   : -1;
                       m.conv_rect(x, v.out_c, v.kernel_h, v.kernel_w, v.stride, v.padding, v.relu, skip, v.requant,
                                   v.dilation);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  }
  for (const int64_t batch : {1, 4}) {
    const uint64_t s = seed++;
    cases.push_back({"network_rectangular_" + shape_name(batch, 3, 16, 16), batch,
                     [s] { return quantize_random(random_rectangular_checkpoint(s), quick_quantize_options(), 32); },
                     CaseImages::Normalised});
  }
}

}  // namespace octet
