#include "tests/ops/shared_task_cases.h"

#include <string>

#include "tests/ops/op_model.h"

namespace octet {

void add_shared_task_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 14000;  // apart from the other cases' seeds, so that theirs keep their models
  struct Conv {
    int64_t batch;
    int c, h, w, out_c, kernel, padding;
  };
  const Conv convs[] = {
      {16, 256, 7, 7, 256, 1, 0},  // 784 pixels in one run: 4 tasks of 12-13 blocks of 16
      {9, 128, 9, 9, 192, 1, 0},   // 729: 46 blocks, the last of 9 pixels, in 4 tasks
      {16, 64, 7, 7, 64, 3, 1},    // 112 output rows of 7 pixels: 4 tasks of 28
      {13, 128, 5, 5, 128, 3, 1},  // 65 rows of 5: 2 tasks, of 32 and 33
  };
  for (const Conv& v : convs) {
    const uint64_t s = seed++;
    cases.push_back({"shared_conv_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
                         std::to_string(v.kernel),
                     v.batch, [v, s] {
                       OpModel m(s);
                       m.conv(m.input(v.c, v.h, v.w), v.out_c, v.kernel, 1, v.padding, true);
                       return m.finish();
                     }});
  }
}

}  // namespace octet
