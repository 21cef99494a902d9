// ChannelSlice on the CPU: a run of channels of each NHWC pixel, copied.
#include <cstring>

#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input();
  const int64_t pixels = a.batch * in.h * in.w;
  for (int64_t p = 0; p < pixels; ++p)
    std::memcpy(a.y + p * n.channels, a.inputs[0] + p * in.c + n.offset, static_cast<size_t>(n.channels));
}
}  // namespace

extern const Kernel channel_slice_kernel = {Op::ChannelSlice, "channel_slice", KernelPath::Reference, runs_every_node,
                                            nullptr, run};

}  // namespace octet::cpu
