// Concat on the CPU: each input's channels requantized to the output's scale
// (a multiplier per input, one shift) into their place in each NHWC pixel.
// An input value's output depends on that byte alone, so each input's 256
// results are computed once and looked up (copied where they are the bytes
// themselves: an input already at the output's scale and zero point).
#include <array>
#include <cstring>

#include "common/requantize.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  const NodeQuant& q = a.node.quant();
  const ActShape out = a.node.output();
  const int64_t pixels = a.batch * out.h * out.w;
  int first = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const int channels = a.node.input(i).c;
    const int32_t multiplier = q.multiplier.data[i], shift = q.shift.data[0], zero_in = a.node.input_zero_point(i);
    std::array<int8_t, 256> table;
    bool identity = true;
    for (int v = -128; v < 128; ++v) {
      table[v + 128] = static_cast<int8_t>(requantize(v - zero_in, multiplier, 0, 0, shift, -128, q.zero_point));
      identity = identity && table[v + 128] == v;
    }
    const int8_t* x = a.inputs[i];
#pragma omp parallel for if (pixels * channels >= kMinParallelWork)
    for (int64_t p = 0; p < pixels; ++p) {
      const int8_t* src = x + p * channels;
      int8_t* dst = a.y + p * out.c + first;
      if (identity) {
        std::memcpy(dst, src, static_cast<size_t>(channels));
        continue;
      }
      for (int c = 0; c < channels; ++c) dst[c] = table[src[c] + 128];
    }
    first += channels;
  }
}
}  // namespace

extern const Kernel concat_kernel = {Op::Concat, "concat", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
