// Conv2d and Linear (a 1x1 convolution over a 1x1 image) on the CPU: the
// AVX-512 VNNI kernels (conv_vnni.cpp), the AVX2 kernels (conv_avx2.cpp) and
// the portable reference path (conv2d.cpp), all on weights packed once
// (PackedWeights). Dilated convs run on the AVX2 and reference paths only.
#include "common/error.h"
#include "graph/layout.h"
#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
struct Packed : KernelData {
  PackedWeights weights;
};

std::unique_ptr<KernelData> pack(const NodeView& v) {
  const Int8Tensor w = nhwc_weight(v.model.graph, v.shapes, v.index, v.quant().weight);
  const ConvGeometry g = conv_geometry(v, 1);
  auto packed = std::make_unique<Packed>();
  packed->weights = PackedWeights(w.ptr(), v.node().channels, g.kernel, g.kernel_w, g.in_c, g.input_bits);
  return packed;
}

// The SIMD kernels' epilogue operands, once per engine (Kernel::bind).
template <KernelPath Path>
std::unique_ptr<KernelData> bind_epilogue(const NodeView& v, const KernelData* prepared) {
  const PackedWeights& w = static_cast<const Packed*>(prepared)->weights;
  const RequantEpilogue e = requant_epilogue(v);
  return std::make_unique<BoundEpilogue>(
      conv_epilogue(conv_geometry(v, 1), w, v.is_output() ? nullptr : &e, v.quant().bias.ptr(), Path));
}

void run(const KernelArgs& a, KernelPath path) {
  const NodeView& v = a.node;
  const PackedWeights& w = static_cast<const Packed*>(a.data)->weights;
  const ConvGeometry g = conv_geometry(v, a.batch);
  if (path != KernelPath::Reference)
    return conv2d_simd(g, a.inputs[0], w, static_cast<const BoundEpilogue*>(a.bound)->tables(a), a.y, a.logits,
                       path);
  if (v.is_output()) return conv2d_int32(g, a.inputs[0], w, v.quant().bias.ptr(), a.logits, path);
  conv2d(g, a.inputs[0], w, requant_epilogue(a), a.y, path);
}

std::string dense(const NodeView& v) {
  const Node& n = v.node();
  return n.op == Op::Conv2d && n.groups > 1
             ? "grouped (groups " + std::to_string(n.groups) + "): conv2d_grouped.cpp's kernels run it"
             : "";
}
// The VNNI kernel reads a kernel row's taps as one run of adjacent pixels.
std::string undilated(const NodeView& v) {
  const Node& n = v.node();
  return n.op == Op::Conv2d && n.dilation > 1
             ? "dilated (dilation " + std::to_string(n.dilation) + "): conv2d-avx2 or conv2d-reference runs it"
             : dense(v);
}
std::string dense_on_vnni(const NodeView& v) {
  return kernel_path_supported(KernelPath::Avx512Vnni) ? undilated(v) : "this CPU lacks AVX-512 VNNI";
}
std::string dense_on_avx2(const NodeView& v) {
  return kernel_path_supported(KernelPath::Avx2) ? dense(v) : "this CPU lacks AVX2";
}
void run_vnni(const KernelArgs& a) { run(a, KernelPath::Avx512Vnni); }
void run_avx2(const KernelArgs& a) { run(a, KernelPath::Avx2); }
void run_reference(const KernelArgs& a) { run(a, KernelPath::Reference); }
}  // namespace

extern const Kernel conv2d_vnni = {Op::Conv2d, "conv2d-avx512-vnni", KernelPath::Avx512Vnni, dense_on_vnni, pack,
                                   run_vnni, bind_epilogue<KernelPath::Avx512Vnni>};
extern const Kernel conv2d_avx2 = {Op::Conv2d, "conv2d-avx2", KernelPath::Avx2, dense_on_avx2, pack, run_avx2,
                                   bind_epilogue<KernelPath::Avx2>};
extern const Kernel conv2d_reference = {Op::Conv2d, "conv2d-reference", KernelPath::Reference, dense, pack,
                                        run_reference};
extern const Kernel linear_vnni = {Op::Linear, "linear-avx512-vnni", KernelPath::Avx512Vnni, dense_on_vnni, pack,
                                   run_vnni, bind_epilogue<KernelPath::Avx512Vnni>};
extern const Kernel linear_avx2 = {Op::Linear, "linear-avx2", KernelPath::Avx2, dense_on_avx2, pack, run_avx2,
                                   bind_epilogue<KernelPath::Avx2>};
extern const Kernel linear_reference = {Op::Linear, "linear-reference", KernelPath::Reference, dense, pack,
                                        run_reference};

}  // namespace octet::cpu
