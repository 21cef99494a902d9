// Add: the element-wise sum of two values of one shape (a residual add that
// could not be fused into the conv before it). In int8 both inputs are
// rescaled to the output's scale by one multiplier each, sharing one shift.
#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) {
  check(in[0] == in[1], "adds shapes " + to_string(in[0]) + " and " + to_string(in[1]));
  return in[0];
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor &x = *a.inputs[0], &z = *a.inputs[1];
  FloatTensor& y = a.y;
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
  for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = x.data[k] + z.data[k];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor &x = *a.inputs[0], &z = *a.inputs[1];
  const NodeQuant& q = a.q;
  a.y = ActTensor(x.shape);
  const int32_t x_zero = a.input_zero_points.at(0), z_zero = a.input_zero_points.at(1);
  for (int64_t k = 0; k < a.y.numel(); ++k)
    a.y.data[k] = static_cast<int16_t>(requantize(x.data[k] - x_zero, q.multiplier.data[0], z.data[k] - z_zero,
                                                 q.multiplier.data[1], q.shift.data[0], output_floor(a), q.zero_point));
}
}  // namespace

//                        name   in train  weight image  relu   resid  scale  mult  moves
extern const OpDef add = {{Op::Add, "add", 2, false, false, false, true, false, true, 2, false},
                          shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
