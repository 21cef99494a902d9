// ChannelShuffle on the CPU: each pixel's channels permuted (ShuffleNet's
// reshape-transpose-reshape), values unchanged.
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const int64_t channels = a.node.output().c, groups = a.node.node().groups, per_group = channels / groups;
  const int64_t pixels = a.batch * a.node.output().numel() / channels;
  parallel_for(pixels, pixels * channels >= kMinParallelWork, [&](int64_t p) {
    const int8_t* x = a.inputs[0] + p * channels;
    int8_t* y = a.y + p * channels;
    for (int64_t g = 0; g < groups; ++g)  // input channel g * per_group + i goes to output i * groups + g
      for (int64_t i = 0; i < per_group; ++i) y[i * groups + g] = x[g * per_group + i];
  });
}
}  // namespace

extern const Kernel channel_shuffle_kernel = {Op::ChannelShuffle, "channel_shuffle", KernelPath::Reference,
                                              runs_every_node, nullptr, run};

}  // namespace octet::cpu
