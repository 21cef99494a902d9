// LocalResponseNorm on the CPU: each NHWC pixel's channels, which lie side by
// side, through ops::local_response_pixel, the oracle's own function, m(S)
// looked up in ops::local_response_multipliers (made once per engine: it
// depends on the scales), where the oracle computes it; pixels shared among
// the threads.
#include <vector>

#include "graph/ops/local_response_norm.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
ops::LocalResponseLevels levels(const NodeView& v) {
  return ops::local_response_levels(v.node(), v.model.quant[v.node().inputs[0]].scale, v.quant().scale,
                                    v.input_zero_point(), v.quant().zero_point);
}

struct Multipliers : KernelData {
  std::vector<double> by_squares;
};
std::unique_ptr<KernelData> bind_multipliers(const NodeView& v, const KernelData*) {
  auto bound = std::make_unique<Multipliers>();
  bound->by_squares = ops::local_response_multipliers(levels(v));
  return bound;
}

void run(const KernelArgs& a) {
  const ops::LocalResponseLevels p = levels(a.node);
  const std::vector<double>& by_squares = static_cast<const Multipliers*>(a.bound)->by_squares;
  const auto multiplier = [&](int64_t squares) { return by_squares[static_cast<size_t>(squares)]; };
  const int C = a.node.output().c;
  const int64_t pixels = a.batch * a.node.output().h * a.node.output().w;
  parallel_for(pixels, pixels * C >= kMinParallelWork, [&](int64_t i) {
    ops::local_response_pixel(a.inputs[0] + i * C, C, p, multiplier, a.y + i * C);
  });
}
}  // namespace

extern const Kernel local_response_norm_kernel = {Op::LocalResponseNorm, "local_response_norm", KernelPath::Reference,
                                                  runs_every_node, nullptr, run, bind_multipliers};

}  // namespace octet::cpu
