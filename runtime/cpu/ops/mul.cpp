// Mul on the CPU: the product of the two int8 inputs (the second per channel,
// per pixel or of the same shape) requantized by one multiplier: with
// AVX-512 (not per pixel) or AVX2 on those paths (mul_simd.h;
// squeeze-and-excitation gates were most of EfficientNet's time), else one
// value at a time. Threads share the pixels of the batch; a per-channel gate
// is read from its sample's row of channels, a per-pixel one from its pixel.
#include <vector>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/ops/mul.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/mul_simd.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
struct MulShape {
  int64_t channels, pixels_per_sample, pixels;
  ops::MulGate gate;
};
MulShape mul_shape(const KernelArgs& a) {
  const ActShape out = a.node.output();
  const int64_t per_sample = int64_t(out.h) * out.w;
  return {out.c, per_sample, a.batch * per_sample, ops::mul_gate(out, a.node.input(1))};
}

void run(const KernelArgs& a) {
  const NodeQuant& q = a.node.quant();
  const int32_t multiplier = q.multiplier.data[0], shift = q.shift.data[0];
  const int32_t x_zero = a.node.input_zero_point(0), z_zero = a.node.input_zero_point(1);
  const MulShape s = mul_shape(a);
  const int8_t *x = a.inputs[0], *z = a.inputs[1];
  parallel_for(s.pixels, s.pixels * s.channels >= kMinParallelWork, [&](int64_t p) {
    const int64_t at = p * s.channels;
    // A per-pixel gate is the pixel's one value for every channel (a step of 0).
    const int8_t* gate = z + (s.gate == ops::MulGate::PerChannel ? p / s.pixels_per_sample * s.channels
                              : s.gate == ops::MulGate::PerPixel  ? p
                                                                  : at);
    const int64_t step = s.gate == ops::MulGate::PerPixel ? 0 : 1;
    for (int64_t c = 0; c < s.channels; ++c)
      a.y[at + c] = static_cast<int8_t>(requantize((x[at + c] - x_zero) * (gate[c * step] - z_zero), multiplier, 0,
                                                   0, shift, -128, q.zero_point));
  });
}

template <typename Simd>
void run_simd(const KernelArgs& a, Simd mul, KernelPath path) {
  const MulShape s = mul_shape(a);
  const NodeQuant& q = a.node.quant();
  // The epilogue's per-channel operands all alike (one requantization), no bias.
  const size_t n = static_cast<size_t>(s.channels);
  const std::vector<int32_t> bias(n, 0), multiplier(n, q.multiplier.data[0]), shift(n, q.shift.data[0]);
  RequantEpilogue requant;
  requant.bias = bias.data(), requant.multiplier = multiplier.data(), requant.shift = shift.data();
  requant.zero_point = q.zero_point;
  PaddedEpilogue e(static_cast<int>(s.channels), bias.data(), &requant, 0, 8);
  e.tables.activation_bound = 255;  // mul_simd.h
  if (path == KernelPath::Avx512Vnni) e.add_vnni_vectors(2);  // a product: at most 255 * 255
  mul(a.inputs[0], a.inputs[1], s.pixels, s.channels, s.pixels_per_sample, s.gate, a.node.input_zero_point(0),
      a.node.input_zero_point(1), e.tables, a.y);
}
void run_vnni(const KernelArgs& a) {
#if defined(OCTET_CPU_VNNI)
  run_simd(a, vnni::mul, KernelPath::Avx512Vnni);
#else
  fail("mul-avx512: this build has no AVX-512 kernels");
#endif
}
void run_avx2(const KernelArgs& a) {
#if defined(OCTET_CPU_AVX2)
  run_simd(a, avx2::mul, KernelPath::Avx2);
#else
  fail("mul-avx2: this build has no AVX2 kernels");
#endif
}

// The AVX-512 kernel has no gate per pixel (no AVX-512 CPU to try one on when it came): mul-avx2 runs it.
std::string runs_on_vnni(const NodeView& v) {
  if (std::string why = path_unsupported(KernelPath::Avx512Vnni); !why.empty()) return why;
  if (ops::mul_gate(v.output(), v.input(1)) == ops::MulGate::PerPixel)
    return "a gate per pixel (" + to_string(v.input(1)) + "): mul-avx2 runs it";
  return "";
}
}  // namespace

extern const Kernel mul_vnni_kernel = {Op::Mul, "mul-avx512", KernelPath::Avx512Vnni, runs_on_vnni, nullptr,
                                       run_vnni};
extern const Kernel mul_avx2_kernel = {Op::Mul, "mul-avx2", KernelPath::Avx2, runs_every_node_on_avx2, nullptr,
                                       run_avx2};
extern const Kernel mul_kernel = {Op::Mul, "mul", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
