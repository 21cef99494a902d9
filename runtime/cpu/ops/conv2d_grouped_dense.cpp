// Grouped convolutions (groups > 1, not depthwise: RegNet's and ResNeXt's
// 3x3s, a depthwise conv with a channel multiplier) on the SIMD paths, as one
// dense conv per group (conv2d.cpp's AVX-512 VNNI and AVX2 kernels). A group
// reads its own input channels and writes its own output channels, so the
// input (and a fused residual) is first copied group-major, each group runs
// as a dense conv of its channels, and the outputs are copied back into
// NHWC. Groups of fewer than 16 output channels (ResNeXt-50's 32 groups of
// 4, MobileFaceNet's 64 of 2) run merged, as few at a time as make 16: one
// dense conv whose weights are zero between its groups, which fills the
// kernels' 16 output lanes and takes one call and one regroup in place of
// many (a group of 2 alone filled 2 lanes of 16). The accumulators are the
// dense kernels', and the zeros add nothing to them, so the outputs are the
// portable conv2d-grouped's bit for bit.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "graph/layout.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
// Output channels that fill the dense kernels' lanes.
constexpr int kLanes = 16;

// How many adjacent groups run as one: the fewest that divide the groups
// and make kLanes output channels (all of them where none do).
int merged_groups(const Node& n) {
  const int group_out = n.channels / n.groups;
  int merge = 1;
  while (merge < n.groups && (merge * group_out < kLanes || n.groups % merge != 0)) ++merge;
  return merge;
}

struct GroupWeights : KernelData {
  std::vector<PackedWeights> groups;  // each group's [group out][kernel][kernel width][group in], packed
};

std::unique_ptr<KernelData> pack_groups(const NodeView& v) {
  const Node& n = v.node();
  const Int8Tensor ohwi = conv_weight_ohwi(v.quant().weight);  // [out][kernel][kernel width][in / groups]
  const int group_in = v.input().c / n.groups, group_out = n.channels / n.groups, merge = merged_groups(n);
  const int64_t taps = int64_t(n.kernel) * kernel_width(n);
  auto packed = std::make_unique<GroupWeights>();
  // Each run's weights, [merge * group_out][kernel][kernel width][merge * group_in]: group s's block at (s, s).
  std::vector<int8_t> run(static_cast<size_t>(merge * group_out * taps * merge * group_in));
  for (int first = 0; first < n.groups; first += merge) {
    std::fill(run.begin(), run.end(), int8_t{0});
    for (int s = 0; s < merge; ++s)
      for (int64_t o = 0; o < group_out; ++o)
        for (int64_t t = 0; t < taps; ++t)
          std::memcpy(run.data() + ((s * group_out + o) * taps + t) * merge * group_in + s * group_in,
                      ohwi.ptr() + (((first + s) * group_out + o) * taps + t) * group_in, static_cast<size_t>(group_in));
    packed->groups.emplace_back(run.data(), merge * group_out, n.kernel, kernel_width(n), merge * group_in);
  }
  return packed;
}

std::string grouped_dense_on(const NodeView& v, KernelPath path) {
  if (std::string why = path_unsupported(path); !why.empty()) return why;
  const Node& n = v.node();
  if (n.groups == 1) return "not grouped (groups 1): the dense kernels run it";
  if (is_depthwise(v)) return "depthwise: the conv2d-depthwise kernels run it";
  if (n.dilation > 1 && path == KernelPath::Avx512Vnni)
    return "dilated (dilation " + std::to_string(n.dilation) +
           "): the VNNI kernel reads adjacent taps; conv2d-grouped runs it";
  if (v.is_output()) return "the network's output (int32 logits; octet's graphs end in a linear layer)";
  return "";
}
std::string grouped_dense_on_vnni(const NodeView& v) { return grouped_dense_on(v, KernelPath::Avx512Vnni); }
std::string grouped_dense_on_avx2(const NodeView& v) { return grouped_dense_on(v, KernelPath::Avx2); }

// Copies width-wide runs from NHWC [pixels][groups * width] to group-major
// [groups][pixels][width] (`split`), or back.
void regroup(const int8_t* from, int8_t* to, int64_t pixels, int groups, int width, bool split) {
  const int64_t total = pixels * groups;
#pragma omp parallel for schedule(static) if (share_work(total * width >= kMinParallelWork))
  for (int64_t i = 0; i < total; ++i) {
    const int64_t group_major = i * width, nhwc = (i % pixels * groups + i / pixels) * width;
    std::memcpy(to + (split ? group_major : nhwc), from + (split ? nhwc : group_major), static_cast<size_t>(width));
  }
}

void run_grouped_dense(const KernelArgs& a, KernelPath path) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int groups = n.groups / merged_groups(n), group_in = in.c / groups, group_out = out.c / groups;
  const int64_t in_pixels = a.batch * in.h * in.w, out_pixels = a.batch * out.h * out.w;
  const std::vector<PackedWeights>& weights = static_cast<const GroupWeights*>(a.data)->groups;
  const RequantEpilogue e = requant_epilogue(a);
  // One buffer per calling thread, kept between runs (layers do not pay for fresh pages).
  thread_local std::vector<int8_t> input, output, skip;
  input.resize(static_cast<size_t>(in_pixels * in.c));
  output.resize(static_cast<size_t>(out_pixels * out.c));
  regroup(a.inputs[0], input.data(), in_pixels, groups, group_in, true);
  if (e.skip) {
    skip.resize(static_cast<size_t>(out_pixels * out.c));
    regroup(e.skip, skip.data(), out_pixels, groups, group_out, true);
  }
  ConvGeometry g = conv_geometry(a.node, a.batch);
  g.in_c = group_in, g.out_c = group_out;
  for (int k = 0; k < groups; ++k) {
    RequantEpilogue group = e;
    group.bias += k * group_out, group.multiplier += k * group_out, group.shift += k * group_out;
    if (e.skip) group.skip = skip.data() + k * out_pixels * group_out, group.skip_multiplier += k * group_out;
    conv2d(g, input.data() + k * in_pixels * group_in, weights[k], group, output.data() + k * out_pixels * group_out,
           path);
  }
  regroup(output.data(), a.y, out_pixels, groups, group_out, false);
}
void run_grouped_vnni(const KernelArgs& a) { run_grouped_dense(a, KernelPath::Avx512Vnni); }
void run_grouped_avx2(const KernelArgs& a) { run_grouped_dense(a, KernelPath::Avx2); }
}  // namespace

extern const Kernel conv2d_grouped_vnni = {Op::Conv2d,         "conv2d-grouped-avx512-vnni", KernelPath::Avx512Vnni,
                                           grouped_dense_on_vnni, pack_groups,                run_grouped_vnni};
extern const Kernel conv2d_grouped_avx2 = {Op::Conv2d,         "conv2d-grouped-avx2", KernelPath::Avx2,
                                           grouped_dense_on_avx2, pack_groups,         run_grouped_avx2};

}  // namespace octet::cpu
