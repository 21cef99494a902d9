// AvgPool2d: the mean of each window. Attributes: kernel, stride, padding
// (each down and across: graph.h's pool_rows and pool_columns; padding counted
// as zeros unless exclude_padding), ceil_mode. In int8 the window's sum is
// requantized to the output's own scale by a multiplier that divides by the
// window's count (pool2d.h's avg_pool_multiplier).
#include "graph/ops/pool2d.h"

namespace octet::ops {

namespace {
// kernel x kernel, or each count from 1 where windows count different numbers of values.
std::vector<double> windows(const Node& n, const std::vector<ActShape>& in) {
  const int64_t counts = avg_pool_multiplier_count(n, in[0], pool_shape(n, in));
  check(std::max(n.kernel, kernel_width(n)) <= kMostUnevenPoolKernel || counts == 1,
        "average pool '" + n.name + "': a " + std::to_string(n.kernel) + "x" + std::to_string(kernel_width(n)) +
            " kernel whose windows count different numbers of values (" +
            (n.exclude_padding ? "padding not counted" : "ceil_mode's last window") + "); int8 averages take at most " +
            std::to_string(kMostUnevenPoolKernel) + "x" + std::to_string(kMostUnevenPoolKernel) + " there");
  if (counts == 1) return {double(n.kernel) * kernel_width(n)};
  std::vector<double> by_count;
  for (int64_t count = 1; count <= counts; ++count) by_count.push_back(double(count));
  return by_count;
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
                                 pool_shape, nullptr, nullptr, windows, run_float, run_int8_reference};

}  // namespace octet::ops
