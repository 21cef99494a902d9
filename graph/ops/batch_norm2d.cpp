// BatchNorm2d: batch normalisation of a conv's output, in training graphs
// only: graph/fold.cpp folds it into the conv before it. Parameters per
// channel: weight, bias, running_mean, running_var.
#include "graph/op.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) { return in[0]; }

std::vector<ParamShape> params(const Node&, const std::vector<ActShape>& in) {
  const int64_t c = in[0].c;
  return {{".weight", {c}, true}, {".bias", {c}, true}, {".running_mean", {c}, false}, {".running_var", {c}, false}};
}
}  // namespace

//                                 name            in train  weight image  relu   resid  scale  mult  moves
extern const OpDef batch_norm2d = {{Op::BatchNorm2d, "batch_norm2d", 1, true, false, true, false, false, false, 0, false},
                                   shape, params, nullptr, nullptr, nullptr, nullptr};

}  // namespace octet::ops
