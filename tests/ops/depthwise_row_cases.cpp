#include "tests/ops/depthwise_row_cases.h"

#include <string>

#include "tests/ops/op_model.h"

namespace octet {

void add_depthwise_row_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 8100;  // apart from the other cases' seeds, so that theirs keep their models
  struct Row {
    int64_t batch;
    int c, h, w, kernel, padding;
    bool residual, unsigned_input;
  };
  const Row rows[] = {
      {3, 48, 6, 1, 3, 1, false, false}, {2, 32, 5, 9, 3, 0, false, false}, {2, 64, 7, 7, 5, 0, true, false},
      {2, 16, 9, 10, 5, 2, true, false}, {2, 32, 6, 11, 3, 1, false, true}, {1, 16, 9, 5, 7, 3, false, true},
  };
  for (const Row& v : rows) {
    const uint64_t s = seed++;
    cases.push_back({"depthwise_rows_" + shape_name(v.batch, v.c, v.h, v.w) + "_k" + std::to_string(v.kernel) + "p" +
                         std::to_string(v.padding) + (v.residual ? "_residual" : "") +
                         (v.unsigned_input ? "_uint8" : ""),
                     v.batch,
                     [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w, v.unsigned_input);
                       const int skip = v.residual ? m.conv(x, v.c, v.kernel, 1, v.padding, false, -1,
                                                            Requant::Typical, v.c)
                                                   : -1;
                       m.conv(x, v.c, v.kernel, 1, v.padding, true, skip, Requant::Typical, v.c);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  }
}

}  // namespace octet
