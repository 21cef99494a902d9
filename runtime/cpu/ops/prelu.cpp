// PRelu on the CPU: each int8 value through its channel's 256-entry table
// (graph/ops/prelu.h), made once per engine from the scales (bind): the
// values of a pixel are its channels in order, so the tables are read in
// order too.
#include <memory>
#include <vector>

#include "graph/ops/prelu.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
struct Tables : KernelData {
  std::vector<int8_t> levels;  // [C][256]
};

std::unique_ptr<KernelData> bind(const NodeView& v, const KernelData*) {
  auto t = std::make_unique<Tables>();
  t->levels = ops::prelu_tables(v.quant().slope, v.model.quant[v.node().inputs[0]].scale, v.quant().scale,
                                v.input_zero_point(), v.quant().zero_point);
  return t;
}

void run(const KernelArgs& a) {
  const int8_t* levels = static_cast<const Tables*>(a.bound)->levels.data();
  const int64_t channels = a.node.output().c, pixels = a.batch * a.node.output().numel() / channels;
  const int8_t* x = a.inputs[0];
  parallel_for(pixels, pixels * channels >= kMinParallelWork, [&](int64_t p) {
    const int8_t* in = x + p * channels;
    int8_t* out = a.y + p * channels;
    for (int64_t c = 0; c < channels; ++c) out[c] = levels[c * 256 + in[c] + 128];
  });
}
}  // namespace

extern const Kernel prelu_kernel = {Op::PRelu, "prelu-table", KernelPath::Reference, runs_every_node, nullptr, run,
                                    bind};

}  // namespace octet::cpu
