// ShortcutA on the CPU: every second row and column, zero channels either side.
#include <cstring>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const int pad = a.node.node().channels, c = in.c, zero = a.node.input_zero_point();  // a real 0
  parallel_for(a.batch, a.batch * in.h * in.w * c >= kMinParallelWork, [&](int64_t b) {
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox) {
        int8_t* dst = a.y + ((b * out.h + oy) * out.w + ox) * out.c;
        std::memset(dst, zero, pad);
        std::memcpy(dst + pad, a.inputs[0] + ((b * in.h + 2 * oy) * in.w + 2 * ox) * c, c);
        std::memset(dst + pad + c, zero, pad);
      }
  });
}
}  // namespace

extern const Kernel shortcut_a_kernel = {Op::ShortcutA, "shortcut_a", KernelPath::Reference, runs_every_node, nullptr,
                                         run};

}  // namespace octet::cpu
