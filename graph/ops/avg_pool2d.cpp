// AvgPool2d: the mean of each window. Attributes: kernel, stride, padding
// (counted as zeros unless exclude_padding), ceil_mode. In int8 the window's
// sum is requantized to the output's own scale by a multiplier that divides by
// the window's count (pool2d.h's avg_pool_multiplier).
#include "graph/ops/pool2d.h"

namespace octet::ops {

namespace {
// The largest window, whose int32 sum must not overflow.
double window(const Node& n, const std::vector<ActShape>& in) {
  check(n.kernel <= kMostUnevenPoolKernel || pool_windows_uniform(n, in[0], pool_shape(n, in)),
        "average pool '" + n.name + "': a " + std::to_string(n.kernel) + "x" + std::to_string(n.kernel) +
            " kernel whose windows count different numbers of values (" +
            (n.exclude_padding ? "padding not counted" : "ceil_mode's last window") + "); int8 averages take at most " +
            std::to_string(kMostUnevenPoolKernel) + "x" + std::to_string(kMostUnevenPoolKernel) + " there");
  return double(n.kernel) * n.kernel;
}

void run_float(const FloatOpArgs& a) {
  pool_float(a, 0.0f, [](float acc, float v) { return acc + v; },
             [](float acc, int count) { return acc * (1.0f / static_cast<float>(count)); });
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const NodeQuant& q = a.q;
  pool_int8_reference(a, [&](int32_t, int32_t sum, int count) {
    return requantize(sum, avg_pool_multiplier(q.multiplier, count), 0, 0, q.shift.data[0], -128, q.zero_point);
  });
}
}  // namespace

//                               name          in train  weight image  relu   resid  scale  mult  moves
extern const OpDef avg_pool2d = {{Op::AvgPool2d, "avg_pool2d", 1, false, false, true, false, false, true, 1, false},
                                 pool_shape, nullptr, nullptr, window, run_float, run_int8_reference};

}  // namespace octet::ops
