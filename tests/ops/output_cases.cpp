#include "tests/ops/output_cases.h"

#include <string>

#include "tests/ops/op_model.h"

namespace octet {

void add_output_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 15000;  // apart from the other cases' seeds, so that theirs keep their models
  for (const int64_t batch : {int64_t{1}, int64_t{16}}) {
    cases.push_back({"outputs_scales_and_vector_" + shape_name(batch, 8, 12, 10), batch, [s = seed++] {
                       OpModel m(s);
                       const int fine = m.conv(m.input(8, 12, 10), 16, 3, 1, 1, true);
                       const int coarse = m.conv(fine, 24, 3, 2, 1, true);
                       return m.finish_with_outputs({fine, coarse, m.global_avg_pool(coarse)}, 4);
                     }});
    cases.push_back({"outputs_read_on_and_twice_" + shape_name(batch, 6, 9, 7), batch, [s = seed++] {
                       OpModel m(s);
                       const int early = m.conv(m.input(6, 9, 7), 12, 3, 1, 1, false);
                       const int late = m.conv(m.max_pool(early, 2, 2), 10, 3, 1, 1, true);
                       return m.finish_with_outputs({late, early, late}, 3);
                     }});
  }
}

}  // namespace octet
