// Linear: a fully connected layer over a flat vector (a flatten before it
// reads C, H, W order, as torch does). Attributes: channels (out features),
// bias. Weight [out][in].
#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.channels > 0, "bad output features");  // an int: within the bound
  check(in[0].h == 1 && in[0].w == 1, "input " + to_string(in[0]) + " is not flat (add a flatten)");
  return {n.channels, 1, 1};
}

std::vector<ParamShape> params(const Node& n, const std::vector<ActShape>& in) {
  std::vector<ParamShape> out = {{".weight", {n.channels, in[0].c}, true}};
  if (n.bias) out.push_back({".bias", {n.channels}, true});
  return out;
}

double macs(const Node&, const std::vector<ActShape>& in, const ActShape& out) {
  return double(out.c) * double(in[0].numel());
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t F = x.numel() / x.dim(0);  // the input's C x H x W values in their natural (C, H, W) order
  write_weighted(a, a.node.channels, 1, 1, [&](int64_t b, int64_t o, int64_t, int64_t) {
    int32_t acc = 0;
    const int32_t zero_point = a.input_zero_points.at(0);
    for (int64_t f = 0; f < F; ++f) acc += int32_t(a.q.weight.data[o * F + f]) * (x.data[b * F + f] - zero_point);
    return acc;
  });
}
}  // namespace

//                           name      in train  weight image  relu   resid  scale  mult  moves
extern const OpDef linear = {{Op::Linear, "linear", 1, false, true, false, true, true, true, 0, false},
                             shape, params, macs, nullptr, run_weighted_float, run_int8_reference};

}  // namespace octet::ops
