// MaxPool2d: the largest value of each window. Attributes: kernel, stride,
// padding (never the maximum; each down and across: graph.h's pool_rows and
// pool_columns), ceil_mode.
// int8 values keep their scale: the maximum of int8 values is exact.
#include <limits>

#include "graph/ops/pool2d.h"

namespace octet::ops {

namespace {
void run_float(const FloatOpArgs& a) {
  pool_float(a, -std::numeric_limits<float>::infinity(), [](float acc, float v) { return std::max(acc, v); },
             [](float acc, int) { return acc; });
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  pool_int8_reference(a, [](int32_t best, int32_t, int) { return best; });
}
}  // namespace

//                               name          in train  weight image  relu   resid  scale  mult  moves
extern const OpDef max_pool2d = {{Op::MaxPool2d, "max_pool2d", 1, false, false, true, false, false, false, 0, false},
                                 pool_shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
