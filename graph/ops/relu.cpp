// ReLU: max(x, 0). Fused into the op before it where that op absorbs it
// (graph/fold.cpp); in int8 it keeps its input's scale.
#include <algorithm>

#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) { return in[0]; }

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  FloatTensor& y = a.y;
#pragma omp parallel for if (y.numel() >= kMinParallelElements)
  for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = std::max(x.data[k], 0.0f);
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  a.y = ActTensor(x.shape);
  const auto zero = static_cast<int16_t>(a.input_zero_points.at(0));  // a real 0
  for (int64_t k = 0; k < x.numel(); ++k) a.y.data[k] = std::max(x.data[k], zero);
}
}  // namespace

//                         name    in train  weight image  relu   resid  scale  mult  moves
extern const OpDef relu = {{Op::ReLU, "relu", 1, false, false, false, false, false, false, 0, false},
                           shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
