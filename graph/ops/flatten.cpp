// Flatten: an image as one vector of C x H x W features. The float executor
// and the runtimes keep NHWC order (the next linear's weights are permuted to
// match, graph/layout.h); the int8 reference keeps torch's C, H, W order.
#include "graph/op.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) {
  return {static_cast<int>(in[0].numel()), 1, 1};  // numel() is bounded above
}

void run_float(const FloatOpArgs& a) { a.y.data = a.inputs[0]->data; }

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  a.y = ActTensor({x.dim(0), x.numel() / x.dim(0), 1, 1}, x.data);  // NCHW memory is already C, H, W order
}
}  // namespace

//                            name       in train  weight image  relu   resid  scale  mult  moves
extern const OpDef flatten = {{Op::Flatten, "flatten", 1, false, false, false, false, false, false, 0, true},
                              shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
