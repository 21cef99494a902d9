#include "runtime/cuda/folded_input.h"

#include "common/error.h"

namespace octet::cuda {

bool stores_folded(const Graph& g, const std::vector<ActShape>& shapes, int node) {
  if (g.nodes[node].op != Op::Input || shapes[node].c > kFoldedSourceBytes) return false;
  bool read = false;
  for (int i = node + 1; i < static_cast<int>(g.nodes.size()); ++i) {
    const Node& n = g.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != node) continue;
      if (k != 0 || n.op != Op::Conv2d || n.groups != 1 || n.dilation != 1 || n.stride != kFold) return false;
      read = true;
    }
  }
  return read;
}

FoldedConv folded_conv(int kernel, int padding) {
  const int folded_padding = (padding + kFold - 1) / kFold, shift = kFold * folded_padding - padding;
  return {(kernel + shift + kFold - 1) / kFold, folded_padding, shift};
}

std::vector<int8_t> fold_weight_rows(const int8_t* rows, int out_c, int kernel, int padding, int in_c) {
  check(in_c <= kFoldedSourceBytes, "fold_weight_rows: " + std::to_string(in_c) + " channels do not fold");
  const FoldedConv f = folded_conv(kernel, padding);
  const int64_t taps = int64_t(f.kernel) * f.kernel;
  std::vector<int8_t> folded(static_cast<size_t>(out_c * taps * kFoldedChannels), 0);
  for (int o = 0; o < out_c; ++o)
    for (int a = 0; a < f.kernel; ++a)
      for (int b = 0; b < f.kernel; ++b)
        for (int r = 0; r < kFold; ++r)
          for (int s = 0; s < kFold; ++s) {
            const int ky = kFold * a + r - f.shift, kx = kFold * b + s - f.shift;
            if (ky < 0 || ky >= kernel || kx < 0 || kx >= kernel) continue;
            const int8_t* from = rows + ((int64_t(o) * kernel + ky) * kernel + kx) * in_c;
            int8_t* to = folded.data() + ((int64_t(o) * taps + a * f.kernel + b) * kFoldedChannels) +
                         (r * kFold + s) * kFoldedSourceBytes;
            for (int c = 0; c < in_c; ++c) to[c] = from[c];
          }
  return folded;
}

}  // namespace octet::cuda
