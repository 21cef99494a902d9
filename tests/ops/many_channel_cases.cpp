#include "tests/ops/many_channel_cases.h"

#include <string>

#include "tests/ops/op_model.h"
#include "tests/support/random_model.h"

namespace octet {

void add_wide_many_channel_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 13000;  // apart from the other cases' seeds, so that theirs keep their models
  struct Pool {
    int64_t batch;
    int c, h, w, kernel, stride, padding;
  };
  for (const Pool& v : {Pool{1, 67, 15, 15, 3, 2, 1}, Pool{2, 64, 14, 14, 3, 1, 1}, Pool{1, 96, 9, 9, 2, 2, 0}}) {
    const uint64_t s = seed++;
    cases.push_back({"max_pool_" + shape_name(v.batch, v.c, v.h, v.w) + "_k" + std::to_string(v.kernel) + "s" +
                         std::to_string(v.stride) + "p" + std::to_string(v.padding),
                     v.batch, [v, s] {
                       OpModel m(s);
                       m.max_pool(m.input(v.c, v.h, v.w), v.kernel, v.stride, v.padding, false);
                       return m.finish();
                     }});
  }
  struct Plane {
    int64_t batch;
    int c, h, w;
  };
  for (const Plane& v : {Plane{2, 300, 7, 7}, Plane{1, 2048, 3, 3}, Plane{3, 257, 2, 5}}) {
    const uint64_t s = seed++;
    cases.push_back({"global_avg_pool_" + shape_name(v.batch, v.c, v.h, v.w), v.batch, [v, s] {
                       OpModel m(s);
                       m.global_avg_pool(m.input(v.c, v.h, v.w));
                       return m.finish();
                     }});
  }
  struct Shuffle {
    int64_t batch;
    int c, h, w, groups;
  };
  for (const Shuffle& v : {Shuffle{1, 464, 3, 3, 2}, Shuffle{2, 232, 4, 5, 2}, Shuffle{1, 390, 2, 3, 3},
                           Shuffle{3, 264, 2, 2, 4}}) {
    const uint64_t s = seed++;
    cases.push_back({"channel_shuffle_" + shape_name(v.batch, v.c, v.h, v.w) + "_g" + std::to_string(v.groups),
                     v.batch, [v, s] {
                       OpModel m(s);
                       m.channel_shuffle(m.input(v.c, v.h, v.w), v.groups);
                       return m.finish();
                     }});
  }
}

}  // namespace octet
