// GroupNorm on the CPU: first each sample's exact integer statistics per
// channel, in blocks of 64 channels (a cache line of every NHWC pixel) shared
// among the threads, summed per group into layer_norm_pixel's offset and
// multiplier; then every value through ops::group_norm_level, the oracle's
// own function, with its channel's affine and the fused ReLU, pixels shared
// among the threads. Or its AVX-512 form (group_norm_vnni.cpp) where the CPU
// has it; on AVX2 (group_norm_avx2.cpp), the output levels 16 at a time.
#include <algorithm>
#include <numeric>
#include <vector>

#include "common/error.h"
#include "graph/ops/group_norm.h"
#include "runtime/cpu/group_norm_simd.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
constexpr int64_t kChannelBlock = 64;
constexpr int64_t kPixelsPerTask = 64;  // the AVX2 kernel's

ops::LayerNormLevels levels(const NodeView& v) {
  const NodeQuant& in = v.model.quant[v.node().inputs[0]];
  return {v.output().numel() / v.node().groups, in.scale,         v.quant().scale, v.input_zero_point(),
          v.quant().zero_point,                 v.node().epsilon};
}

struct ChannelStatistics {
  std::vector<int64_t> sums, squares;  // [batch][C], of the values less the input's zero point
};

ChannelStatistics channel_statistics(const KernelArgs& a, int64_t pixels, int64_t C, int32_t zero_point) {
  ChannelStatistics s{std::vector<int64_t>(static_cast<size_t>(a.batch * C)),
                      std::vector<int64_t>(static_cast<size_t>(a.batch * C))};
  const int64_t blocks = (C + kChannelBlock - 1) / kChannelBlock;
  parallel_for(a.batch * blocks, a.batch * pixels * C >= kMinParallelWork, [&](int64_t i) {
    const int64_t b = i / blocks, first = i % blocks * kChannelBlock, width = std::min(C - first, kChannelBlock);
    int64_t sums[kChannelBlock] = {}, squares[kChannelBlock] = {};
    const int8_t* x = a.inputs[0] + b * pixels * C + first;
    for (int64_t p = 0; p < pixels; ++p, x += C)
      for (int64_t c = 0; c < width; ++c) {
        const int64_t v = x[c] - zero_point;
        sums[c] += v;
        squares[c] += v * v;
      }
    std::copy_n(sums, width, s.sums.begin() + b * C + first);
    std::copy_n(squares, width, s.squares.begin() + b * C + first);
  });
  return s;
}

// Each channel's affine in int8 (ops::group_norm_channels), from the output scale: made once per engine
// (Kernel::bind), also as the AVX-512 kernel reads it, its shifts padded (group_norm_simd.h).
struct BoundAffine : KernelData {
  std::vector<ops::GroupNormChannel> channels;
  std::vector<double> scales, shifts;
};

std::unique_ptr<KernelData> bind_affine(const NodeView& v, const KernelData*) {
  auto bound = std::make_unique<BoundAffine>();
  bound->channels = ops::group_norm_channels(v.output().c, v.quant().norm_scale, v.quant().norm_shift, v.quant().scale);
  for (const ops::GroupNormChannel& c : bound->channels)
    bound->scales.push_back(c.scale), bound->shifts.push_back(c.shift);
  bound->shifts.resize(bound->shifts.size() + vnni::kGroupNormShiftPadding);
  return bound;
}

double lowest(const NodeView& v) { return lowest_output(v.node().relu, v.quant().zero_point); }

// Each sample's groups (layer_norm_pixel of their exact statistics) and each channel's gain m g_c.
struct SampleTerms {
  std::vector<ops::LayerNormPixel> groups;  // [batch][groups]
  std::vector<double> gains;                // [batch][C]
};

SampleTerms sample_terms(const KernelArgs& a, const ops::LayerNormLevels& p,
                         const std::vector<ops::GroupNormChannel>& channels) {
  const ActShape out = a.node.output();
  const int64_t C = out.c, G = a.node.node().groups, width = C / G;
  const ChannelStatistics s = channel_statistics(a, int64_t{out.h} * out.w, C, p.input_zero_point);
  SampleTerms t{std::vector<ops::LayerNormPixel>(static_cast<size_t>(a.batch * G)),
                std::vector<double>(static_cast<size_t>(a.batch * C))};
  for (int64_t g = 0; g < a.batch * G; ++g) {
    const auto first = static_cast<size_t>(g * width);
    const ops::LayerNormPixel group =
        ops::layer_norm_pixel(std::accumulate(&s.sums[first], &s.sums[first] + width, int64_t{0}),
                              std::accumulate(&s.squares[first], &s.squares[first] + width, int64_t{0}), p);
    t.groups[static_cast<size_t>(g)] = group;
    for (size_t c = first; c < first + size_t(width); ++c) t.gains[c] = ops::group_norm_gain(group, channels[c % C]);
  }
  return t;
}

void run(const KernelArgs& a) {
  const ops::LayerNormLevels p = levels(a.node);
  const std::vector<ops::GroupNormChannel>& channels = static_cast<const BoundAffine*>(a.bound)->channels;
  const double floor = lowest(a.node);
  const ActShape out = a.node.output();
  const int64_t C = out.c, pixels = int64_t{out.h} * out.w, G = a.node.node().groups, width = C / G;
  const SampleTerms t = sample_terms(a, p, channels);
  parallel_for(a.batch * pixels, a.batch * pixels * C >= kMinParallelWork, [&](int64_t i) {
    const ops::LayerNormPixel* group = &t.groups[static_cast<size_t>(i / pixels * G)];
    const double* gain = &t.gains[static_cast<size_t>(i / pixels * C)];
    const int8_t* x = a.inputs[0] + i * C;
    int8_t* y = a.y + i * C;
    for (int64_t g = 0; g < G; ++g)
      for (int64_t c = g * width; c < (g + 1) * width; ++c)
        y[c] = ops::group_norm_level(x[c], p, group[g], gain[c], channels[size_t(c)].shift, floor);
  });
}

// The AVX2 kernel makes the output levels; the statistics are the portable kernel's.
std::string runs_on_avx2(const NodeView& v) {
  if (std::string why = path_unsupported(KernelPath::Avx2); !why.empty()) return why;
#if defined(OCTET_CPU_AVX2)
  if (!__builtin_cpu_supports("fma")) return "this CPU lacks FMA";
#endif
  if (v.output().c % 16) return std::to_string(v.output().c) + " channels: the AVX2 kernel takes a multiple of 16";
  return "";
}

void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  const ops::LayerNormLevels p = levels(a.node);
  const auto* affine = static_cast<const BoundAffine*>(a.bound);
  const ActShape out = a.node.output();
  const int64_t C = out.c, pixels = int64_t{out.h} * out.w, width = C / a.node.node().groups;
  const SampleTerms t = sample_terms(a, p, affine->channels);
  std::vector<double> offsets(t.gains.size());  // each channel's group's
  for (size_t c = 0; c < offsets.size(); ++c) offsets[c] = double(t.groups[c / size_t(width)].offset);
  const int64_t tasks_per_sample = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  parallel_for(a.batch * tasks_per_sample, a.batch * pixels * C >= kMinParallelWork, [&](int64_t i) {
    const int64_t b = i / tasks_per_sample, first = b * pixels + i % tasks_per_sample * kPixelsPerTask;
    const auto terms = static_cast<size_t>(b * C);
    const avx2::GroupNormTerms sample{&offsets[terms],    &t.gains[terms], affine->shifts.data(),
                                      double(p.channels), lowest(a.node),  p.output_zero_point};
    avx2::group_norm_pixels(a.inputs[0] + first * C, std::min(kPixelsPerTask, (b + 1) * pixels - first), C, sample,
                            a.y + first * C);
  });
#else
  fail("group_norm-avx2: this build has no AVX2 kernels");
#endif
}

void run_vnni(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  const ActShape out = a.node.output();
  const auto* affine = static_cast<const BoundAffine*>(a.bound);
  vnni::group_norm(a.inputs[0], {a.batch, int64_t{out.h} * out.w, out.c, a.node.node().groups}, levels(a.node),
                   {affine->scales.data(), affine->shifts.data(), lowest(a.node)}, a.y);
#else
  fail("group_norm-avx512: this build has no AVX-512 kernels");
#endif
}
}  // namespace

extern const Kernel group_norm_vnni_kernel = {
    Op::GroupNorm, "group_norm-avx512", KernelPath::Avx512Vnni, runs_every_node_on_vnni, nullptr, run_vnni,
    bind_affine};
extern const Kernel group_norm_avx2_kernel = {
    Op::GroupNorm, "group_norm-avx2", KernelPath::Avx2, runs_on_avx2, nullptr, run_avx2, bind_affine};
extern const Kernel group_norm_kernel = {Op::GroupNorm, "group_norm", KernelPath::Reference, runs_every_node, nullptr,
                                         run, bind_affine};

}  // namespace octet::cpu
