#include "runtime/cuda/folded_input.h"

#include <algorithm>

#include "common/error.h"

namespace octet::cuda {

namespace {
int round_up_16(int bytes) { return (bytes + 15) / 16 * 16; }
int half_up(int size) { return (size + 1) / 2; }
}  // namespace

SpaceToDepthInput ImageFold::space_to_depth_input(int64_t batch) const { return {batch, height, width, channels}; }
PatchInput ImageFold::patch_input(int64_t batch) const {
  return {batch, height, width, channels, kernel, padding, round_up_16(kernel * kernel * kSourceBytes)};
}

int ImageFold::stored_h() const {
  return kind == kSpaceToDepth ? space_to_depth_input(1).stored_h() : patch_input(1).stored_h();
}
int ImageFold::stored_w() const {
  return kind == kSpaceToDepth ? space_to_depth_input(1).stored_w() : patch_input(1).stored_w();
}
int ImageFold::stored_c() const { return kind == kSpaceToDepth ? kSpaceToDepthChannels : patch_input(1).stored_c; }

int64_t ImageFold::offset_of(int y, int x, int c) const {
  if (kind == kSpaceToDepth)
    return (int64_t(y / 2) * stored_w() + x / 2) * stored_c() + ((y % 2) * 2 + x % 2) * kSourceBytes + c;
  // The window that holds (y, x) as its lowest tap in reach: output (y + padding - ky, ...).
  const int ky = std::min(kernel - 1, y + padding), kx = std::min(kernel - 1, x + padding);
  const int oy = y + padding - ky, ox = x + padding - kx;
  return (int64_t(oy) * stored_w() + ox) * stored_c() + (ky * kernel + kx) * kSourceBytes + c;
}

ImageFold image_fold(const Graph& g, const std::vector<ActShape>& shapes, int node) {
  const ActShape s = shapes[node];
  if (g.nodes[node].op != Op::Input || s.c > kSourceBytes) return {};
  std::vector<const Node*> readers;
  for (int i = node + 1; i < static_cast<int>(g.nodes.size()); ++i)
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
      const Node& n = g.nodes[i];
      if (n.inputs[k] != node) continue;
      if (k != 0 || n.op != Op::Conv2d || n.groups != 1 || n.dilation != 1 || rectangular_kernel(n)) return {};
      readers.push_back(&n);
    }
  if (readers.empty()) return {};
  ImageFold f;
  f.height = s.h, f.width = s.w, f.channels = s.c;
  bool all_stride_2 = true, one_window = true;
  for (const Node* n : readers) {
    all_stride_2 = all_stride_2 && n->stride == 2;
    one_window = one_window && n->stride == 1 && n->kernel == readers[0]->kernel && n->padding == readers[0]->padding;
  }
  if (all_stride_2) {
    f.kind = ImageFold::kSpaceToDepth;
  } else if (one_window && readers[0]->kernel >= 2 && readers[0]->kernel <= 4) {
    f.kind = ImageFold::kPatches, f.kernel = readers[0]->kernel, f.padding = readers[0]->padding;
  }
  return f;
}

FoldedConv folded_conv(const ImageFold& f, const Node& conv) {
  check(f.kind != ImageFold::kNone, "folded_conv: node '" + conv.name + "' reads no folded image");
  if (f.kind == ImageFold::kPatches) return {f.stored_h(), f.stored_w(), 1, 1, 0, f.stored_c()};
  // Output o reads source rows 2o - padding + k = 2(o - P + a) + r with k + shift = 2a + r.
  const int padding = half_up(conv.padding), shift = 2 * padding - conv.padding;
  return {f.stored_h(), f.stored_w(), half_up(conv.kernel + shift), 1, padding, kSpaceToDepthChannels};
}

std::vector<int8_t> fold_weight_rows(const ImageFold& f, const Node& conv, const int8_t* rows, int in_c) {
  check(in_c <= kSourceBytes, "fold_weight_rows: node '" + conv.name + "': " + std::to_string(in_c) +
                                  " channels do not fold");
  const FoldedConv fc = folded_conv(f, conv);
  const int k = conv.kernel, taps = fc.kernel * fc.kernel, shift = 2 * fc.padding - conv.padding;
  std::vector<int8_t> folded(static_cast<size_t>(int64_t(conv.channels) * taps * fc.tap_channels), 0);
  for (int o = 0; o < conv.channels; ++o)
    for (int ky = 0; ky < k; ++ky)
      for (int kx = 0; kx < k; ++kx) {
        int64_t at = 0;  // the original tap's bytes in the folded conv's row
        if (f.kind == ImageFold::kPatches) {
          at = (ky * k + kx) * kSourceBytes;
        } else {
          const int a = (ky + shift) / 2, r = (ky + shift) % 2, b = (kx + shift) / 2, s = (kx + shift) % 2;
          at = int64_t(a * fc.kernel + b) * fc.tap_channels + (r * 2 + s) * kSourceBytes;
        }
        const int8_t* from = rows + ((int64_t(o) * k + ky) * k + kx) * in_c;
        std::copy(from, from + in_c, folded.begin() + int64_t(o) * taps * fc.tap_channels + at);
      }
  return folded;
}

}  // namespace octet::cuda
