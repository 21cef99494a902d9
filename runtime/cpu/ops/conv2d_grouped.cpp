// Conv2d with groups > 1 on the CPU (grouped and depthwise convolutions): a
// portable depthwise kernel for one output channel per input channel, whose
// channel loops the compiler vectorises (activations are NHWC, so a pixel's
// channels are adjacent); its AVX-512 and AVX2 forms (depthwise_vnni.cpp,
// depthwise_avx2.cpp), which also requantize 16 or 8 channels at a time; and
// a portable kernel for every grouping, one dot product of a group's
// receptive field per output. All dilate. The dense kernels
// (conv2d_linear.cpp) refuse groups > 1; conv2d_grouped_dense.cpp runs the
// other groupings on the SIMD paths.
#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "graph/layout.h"
#include "runtime/cpu/conv_epilogue.h"
#include "runtime/cpu/depthwise_simd.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
// The weights in NHWC reading order: [out][kernel][kernel width][in / groups].
struct GroupRows : KernelData {
  std::vector<int8_t> rows;
};

std::unique_ptr<KernelData> pack_rows(const NodeView& v) {
  auto packed = std::make_unique<GroupRows>();
  packed->rows = conv_weight_ohwi(v.quant().weight).data;
  return packed;
}

std::string grouped(const NodeView& v) {
  return v.node().groups > 1 ? "" : "not grouped (groups 1): the dense kernels run it";
}

// Activations (less their zero point) times weights.
int32_t dot(const int8_t* x, int32_t zero_point, const int8_t* w, int64_t n) {
  int32_t acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += (int32_t(x[k]) - zero_point) * int32_t(w[k]);
  return acc;
}

void run_grouped(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int groups = n.groups, group_in = in.c / groups, group_out = out.c / groups, k = n.kernel,
            kw = kernel_width(n);
  const int64_t depth = int64_t(k) * kw * group_in, rows = a.batch * out.h * out.w;
  const int8_t* x = a.inputs[0];
  const int8_t* weights = static_cast<const GroupRows*>(a.data)->rows.data();
  const RequantEpilogue e = requant_epilogue(a);
  const int32_t zero_point = a.node.input_zero_point();
#pragma omp parallel if (share_work(rows * depth * out.c >= kMinParallelWork))
  {
    std::vector<int8_t> patch(static_cast<size_t>(depth));
#pragma omp for schedule(static)
    for (int64_t m = 0; m < rows; ++m) {
      const int64_t ox = m % out.w, oy = (m / out.w) % out.h, b = m / (int64_t(out.w) * out.h);
      for (int g = 0; g < groups; ++g) {
        int8_t* p = patch.data();
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx, p += group_in) {
            const int64_t iy = oy * n.stride - n.padding + ky * n.dilation;
            const int64_t ix = ox * n.stride - n.padding + kx * n.dilation;
            if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w)
              std::memset(p, zero_point, group_in);  // a real 0
            else
              std::memcpy(p, x + ((b * in.h + iy) * in.w + ix) * in.c + int64_t(g) * group_in, group_in);
          }
        for (int o = g * group_out; o < (g + 1) * group_out; ++o)
          a.y[m * out.c + o] =
              static_cast<int8_t>(requantize_output(dot(patch.data(), zero_point, weights + o * depth, depth), o,
                                                    m * out.c + o, e));
      }
    }
  }
}

// The depthwise weights tap-major, [kernel * kernel width][channels rounded up to
// kEpilogueBlock], so that a tap's channels are adjacent like the pixel's and
// the SIMD kernels load whole vectors (the padding is zero); for a SIMD
// kernel, its pairs of taps too, made from them by its prepare. Only the
// weights: an engine for other activation scales shares them too
// (CpuEngine(model, packed)).
struct DepthwiseTaps : KernelData {
  std::vector<int32_t> taps;
  std::vector<int16_t> pairs;  // a SIMD kernel's (depthwise_simd.h)
};


int64_t tap_count(const Node& n) { return int64_t(n.kernel) * kernel_width(n); }

std::string depthwise(const NodeView& v) {
  const Node& n = v.node();
  if (is_depthwise(v)) return "";
  return "not depthwise with one output channel per input channel (groups " + std::to_string(n.groups) + ", " +
         std::to_string(v.input().c) + " -> " + std::to_string(n.channels) + " channels)";
}

std::unique_ptr<KernelData> pack_taps(const NodeView& v) {
  const int64_t channels = v.node().channels, taps = tap_count(v.node());
  const int64_t padded = padded_channels(channels);
  auto packed = std::make_unique<DepthwiseTaps>();
  packed->taps.assign(static_cast<size_t>(taps * padded), 0);
  for (int64_t c = 0; c < channels; ++c)  // the weight is [channels][1][kernel][kernel width]
    for (int64_t t = 0; t < taps; ++t) packed->taps[t * padded + c] = v.quant().weight.data[c * taps + t];
  return packed;
}

// The taps and, where this build has the kernel, its pairs of them (depthwise_simd.h).
std::unique_ptr<KernelData> pack_taps_and_avx2_pairs(const NodeView& v) {
  std::unique_ptr<KernelData> packed = pack_taps(v);
#if defined(OCTET_CPU_AVX2)
  auto* d = static_cast<DepthwiseTaps*>(packed.get());
  d->pairs = avx2::paired_taps(d->taps.data(), tap_count(v.node()), v.node().channels);
#endif
  return packed;
}
std::unique_ptr<KernelData> pack_taps_and_vnni_pairs(const NodeView& v) {
  std::unique_ptr<KernelData> packed = pack_taps(v);
#if defined(OCTET_CPU_VNNI)
  auto* d = static_cast<DepthwiseTaps*>(packed.get());
  d->pairs = vnni::paired_taps(d->taps.data(), v.node().kernel, v.node().channels);
#endif
  return packed;
}

void run_depthwise(const KernelArgs& a) {
  const Node& n = a.node.node();
  const ActShape in = a.node.input(), out = a.node.output();
  const int channels = in.c, k = n.kernel, kw = kernel_width(n);
  const int64_t pixels = a.batch * out.h * out.w;
  const int8_t* x = a.inputs[0];
  const int32_t* taps = static_cast<const DepthwiseTaps*>(a.data)->taps.data();
  const int64_t padded = padded_channels(channels);
  const RequantEpilogue e = requant_epilogue(a);
  const int32_t zero_point = a.node.input_zero_point();  // inputs are read less it: the skipped taps add nothing
#pragma omp parallel if (share_work(pixels * channels * tap_count(n) >= kMinParallelWork))
  {
    std::vector<int32_t> acc(static_cast<size_t>(channels));
#pragma omp for schedule(static)
    for (int64_t m = 0; m < pixels; ++m) {
      const int64_t ox = m % out.w, oy = (m / out.w) % out.h, b = m / (int64_t(out.w) * out.h);
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t ky = 0; ky < k; ++ky) {
        const int64_t iy = oy * n.stride - n.padding + ky * n.dilation;
        if (iy < 0 || iy >= in.h) continue;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t ix = ox * n.stride - n.padding + kx * n.dilation;
          if (ix < 0 || ix >= in.w) continue;
          const int8_t* pixel = x + ((b * in.h + iy) * in.w + ix) * channels;
          const int32_t* w = taps + (ky * kw + kx) * padded;
          for (int c = 0; c < channels; ++c) acc[c] += (int32_t(pixel[c]) - zero_point) * w[c];
        }
      }
      for (int c = 0; c < channels; ++c)
        a.y[m * channels + c] = static_cast<int8_t>(requantize_output(acc[c], c, m * channels + c, e));
    }
  }
}

std::string depthwise_on(const NodeView& v, KernelPath path) {
  if (std::string why = path_unsupported(path); !why.empty()) return why;
  if (v.is_output()) return "the network's output (int32 logits; octet's graphs end in a linear layer)";
  // Its pair rows hold a square kernel's rows (untried on a rectangular one: no AVX-512 CPU when it came).
  if (path == KernelPath::Avx512Vnni && rectangular_kernel(v.node()))
    return "a " + std::to_string(v.node().kernel) + "x" + std::to_string(kernel_width(v.node())) +
           " kernel: this kernel's are square; conv2d-depthwise-avx2 runs it";
  return depthwise(v);
}
std::string depthwise_on_vnni(const NodeView& v) { return depthwise_on(v, KernelPath::Avx512Vnni); }
std::string depthwise_on_avx2(const NodeView& v) { return depthwise_on(v, KernelPath::Avx2); }

// The SIMD kernels' epilogue operands (the layer's own bias: the activations
// are read as they are), once per engine (Kernel::bind).
template <KernelPath Path>
std::unique_ptr<KernelData> bind_depthwise(const NodeView& v, const KernelData*) {
  const ConvGeometry g = conv_geometry(v, 1);
  const RequantEpilogue requant = requant_epilogue(v);
  auto e = std::make_unique<PaddedEpilogue>(g.out_c, requant.bias, &requant, g.input_zero_point, g.input_bits);
  if (Path == KernelPath::Avx512Vnni) e->add_vnni_vectors(int64_t(g.kernel) * g.kernel_w);
  return std::make_unique<BoundEpilogue>(std::move(e));
}

void run_depthwise_simd(const KernelArgs& a, KernelPath path) {
  const ConvGeometry g = conv_geometry(a.node, a.batch);
  const EpilogueTables e = static_cast<const BoundEpilogue*>(a.bound)->tables(a);
  const auto* packed = static_cast<const DepthwiseTaps*>(a.data);
#if defined(OCTET_CPU_VNNI)
  if (path == KernelPath::Avx512Vnni) return vnni::depthwise_conv2d(g, a.inputs[0], packed->pairs.data(), e, a.y);
#endif
#if defined(OCTET_CPU_AVX2)
  if (path == KernelPath::Avx2)
    return avx2::depthwise_conv2d(g, a.inputs[0], packed->taps.data(), packed->pairs.data(), e, a.y);
#endif
  fail(std::string("conv2d-depthwise: this build has no ") + kernel_path_name(path) + " kernels");
}
void run_depthwise_vnni(const KernelArgs& a) { run_depthwise_simd(a, KernelPath::Avx512Vnni); }
void run_depthwise_avx2(const KernelArgs& a) { run_depthwise_simd(a, KernelPath::Avx2); }
}  // namespace

extern const Kernel conv2d_depthwise_vnni = {Op::Conv2d, "conv2d-depthwise-avx512-vnni", KernelPath::Avx512Vnni,
                                             depthwise_on_vnni, pack_taps_and_vnni_pairs, run_depthwise_vnni,
                                             bind_depthwise<KernelPath::Avx512Vnni>};
extern const Kernel conv2d_depthwise_avx2 = {Op::Conv2d, "conv2d-depthwise-avx2", KernelPath::Avx2,
                                             depthwise_on_avx2, pack_taps_and_avx2_pairs, run_depthwise_avx2,
                                             bind_depthwise<KernelPath::Avx2>};
extern const Kernel conv2d_depthwise = {Op::Conv2d, "conv2d-depthwise", KernelPath::Reference, depthwise, pack_taps,
                                        run_depthwise};
extern const Kernel conv2d_grouped = {Op::Conv2d, "conv2d-grouped", KernelPath::Reference, grouped, pack_rows,
                                      run_grouped};

}  // namespace octet::cpu
