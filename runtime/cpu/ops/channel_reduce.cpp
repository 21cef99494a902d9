// ChannelMean and ChannelMax on the CPU: each NHWC pixel's run of channels
// reduced to one byte (its sum less the zero point, requantized; its
// largest byte), pixels shared between threads. The reductions read
// restrict-qualified bytes into a value of their own, so that they vectorize.
#include <algorithm>

#include "common/requantize.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
int32_t channel_sum(const int8_t* __restrict pixel, int64_t channels) {
  int32_t sum = 0;
  for (int64_t c = 0; c < channels; ++c) sum += pixel[c];
  return sum;
}

int8_t channel_max(const int8_t* __restrict pixel, int64_t channels) {
  int8_t best = pixel[0];
  for (int64_t c = 1; c < channels; ++c) best = std::max(best, pixel[c]);
  return best;
}

void run_mean(const KernelArgs& a) {
  const int64_t channels = a.node.input().c, pixels = a.batch * a.node.output().h * a.node.output().w;
  const NodeQuant& q = a.node.quant();
  const int32_t multiplier = q.multiplier.data[0], shift = q.shift.data[0], zero_in = a.node.input_zero_point();
  const int8_t* x = a.inputs[0];
  parallel_for(pixels, pixels * channels >= kMinParallelWork, [&](int64_t p) {
    const int32_t sum = channel_sum(x + p * channels, channels);
    a.y[p] = static_cast<int8_t>(requantize(static_cast<int32_t>(sum - zero_in * channels), multiplier, 0, 0, shift,
                                            -128, q.zero_point));
  });
}

void run_max(const KernelArgs& a) {
  const int64_t channels = a.node.input().c, pixels = a.batch * a.node.output().h * a.node.output().w;
  const int8_t* x = a.inputs[0];
  parallel_for(pixels, pixels * channels >= kMinParallelWork,
               [&](int64_t p) { a.y[p] = channel_max(x + p * channels, channels); });
}
}  // namespace

extern const Kernel channel_mean_kernel = {Op::ChannelMean, "channel_mean", KernelPath::Reference, runs_every_node,
                                           nullptr, run_mean};
extern const Kernel channel_max_kernel = {Op::ChannelMax, "channel_max", KernelPath::Reference, runs_every_node,
                                          nullptr, run_max};

}  // namespace octet::cpu
