// Input: the normalised float image (NCHW), NHWC in the float executor and
// quantized once in int8 (common/requantize.h quantize_input). Attributes:
// channels, height, width.
#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>&) {
  check(n.channels > 0 && n.height > 0 && n.width > 0 && within_bound(n.channels, n.height, n.width),
        "bad input shape");
  return {n.channels, n.height, n.width};
}

void run_float(const FloatOpArgs& a) {
  const ActShape s = a.out;
  const int64_t plane = static_cast<int64_t>(s.h) * s.w;
#pragma omp parallel for
  for (int64_t n = 0; n < a.y.dim(0); ++n)
    for (int c = 0; c < s.c; ++c)
      for (int64_t p = 0; p < plane; ++p) a.y.data[(n * plane + p) * s.c + c] = a.image[(n * s.c + c) * plane + p];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  a.y = ActTensor({a.batch, a.node.channels, a.node.height, a.node.width});
  for (int64_t k = 0; k < a.y.numel(); ++k) a.y.data[k] = quantize_input(a.image[k], a.q.scale);
}
}  // namespace

//                         name     in train  weight image  relu   resid  scale  mult  moves
extern const OpDef input = {{Op::Input, "input", 0, false, false, false, false, false, true, 0, false},
                            shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
