// The CPU runtime's convolution (a linear layer is one too) and the choice of
// kernel path. Activations are NHWC int8; every output is produced by
// common/requantize.h. Kernels parallelise with OpenMP. The table of kernels
// per operator is kernel.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu/cache_line_vector.h"
#include "runtime/cpu/conv_epilogue.h"
#include "runtime/requant_epilogue.h"

namespace octet::cpu {

// Below this many values (or multiply-adds) a kernel runs on the calling
// thread: waking the other threads would cost more than it saves.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;

// A convolution; a linear layer is a 1x1 convolution over a 1x1 image.
struct ConvGeometry {
  int64_t batch = 0;
  int in_h = 1, in_w = 1, in_c = 0;
  int out_h = 1, out_w = 1, out_c = 0;
  int kernel = 1, stride = 1, padding = 0;  // kernel: its height
  int kernel_w = 1;                         // and its width
  int dilation = 1;  // not on the AVX-512 VNNI path: its kernel reads each kernel row's taps as one run
  // The input's stored value of a real 0: the padding's value. Every path
  // accumulates weight x (input - input_zero_point).
  int input_zero_point = 0;
  // The input's bits (NodeQuant::bits): above 8, int16 values (zero point 0).
  int input_bits = 8;
  int64_t rows() const { return batch * out_h * out_w; }        // GEMM M
  int64_t depth() const { return int64_t(kernel) * kernel_w * in_c; }  // GEMM K
  // A 1x1, stride-1, unpadded conv (or a linear layer): each input pixel is its output pixel's patch.
  bool pointwise() const { return kernel == 1 && kernel_w == 1 && stride == 1 && padding == 0; }
  // A 1x1 unpadded conv of any stride (ResNet's projection shortcuts): an output pixel reads one input pixel.
  bool one_to_one() const { return kernel == 1 && kernel_w == 1 && padding == 0; }
};

// The implementations of conv2d and conv2d_int32. Both compute the same bits;
// the reference path is portable C++ and the definition of the results.
enum class KernelPath {
  Reference,   // portable: one dot product per output
  Avx2,        // AVX2 (vpmaddwd on int16) implicit GEMM over a padded int16 copy of the input (conv_avx2.cpp)
  Avx512Vnni,  // AVX-512 VNNI (vpdpbusd; vpdpwssd for int16) implicit GEMM over a padded copy of the input (conv_vnni.cpp)
};
const char* kernel_path_name(KernelPath path);  // "reference", "avx2", "avx512-vnni"
bool kernel_path_supported(KernelPath path);    // by this CPU
// Whether this CPU has AVX-512 VBMI (with F and BW), which lookup_simd.h's vbmi lookups need.
bool cpu_has_avx512_vbmi();
// The path of that name; fails on an unknown name or a path this CPU lacks.
KernelPath kernel_path_from_name(const std::string& name);
// The path in use: the fastest one this CPU supports (avx512-vnni, then avx2,
// then reference), unless the environment variable OCTET_CPU_KERNELS (or
// set_kernel_path) names another. OCTET_CPU_KERNELS=avx512-vnni on a CPU
// without it fails.
KernelPath kernel_path();
// For tests and benchmarks; fails when the CPU lacks the path. A kernel
// already running keeps the path it started with.
void set_kernel_path(KernelPath path);

// Weights packed once at load for the conv kernels. `ohwi` is
// [O][kernel_h][kernel_w][in_c], the order in which an NHWC patch is read (a
// linear layer: kernel 1 x 1, in_c = its input features).
class PackedWeights {
 public:
  PackedWeights() = default;
  // `input_bits`: the input's (ConvGeometry::input_bits), which says which VNNI layout is made.
  PackedWeights(const int8_t* ohwi, int out_c, int kernel_h, int kernel_w, int in_c, int input_bits = 8);
  int out_c() const { return out_c_; }
  int kernel_h() const { return kernel_h_; }
  int kernel_w() const { return kernel_w_; }
  int in_c() const { return in_c_; }
  int64_t depth() const { return int64_t(kernel_h_) * kernel_w_ * in_c_; }
  const int8_t* rows() const { return rows_.data(); }  // [O][depth], the layout given
  // The VNNI layout, made when the CPU supports it: input channels padded
  // with zeros to a multiple of 4 (in_c4), then blocks of 16 output channels,
  // [O/16][kernel_h * kernel_w * in_c4 / 4][16][4], so one 64-byte load holds 4
  // input channels of 16 output channels.
  CacheLineVector<int8_t> blocked;
  // Instead, for a wide (int16) input: the weights widened to int16, input
  // channels padded to even, [O/16][kernel_h * kernel_w * in_c2 / 2][16][2],
  // so one 64-byte load holds 2 input channels of 16 output channels.
  CacheLineVector<int16_t> blocked_wide;
  std::vector<int32_t> row_sums;  // [O] sum of each channel's weights
  // The AVX2 layout, made when the CPU supports it: the weights widened to
  // int16, input channels padded with zeros to even (in_c2), then blocks of
  // 8 output channels, [O/8][kernel_h * kernel_w * in_c2 / 2][8][2], so one
  // 32-byte load holds 2 input channels of 8 output channels.
  CacheLineVector<int16_t> blocked_pairs;
  // And its layout for inputs with no negative value: int8, input channels
  // padded to a multiple of 4, [O/8][kernel_h * kernel_w * in_c4 / 4][8][4].
  CacheLineVector<int8_t> blocked_quads;

 private:
  int out_c_ = 0, kernel_h_ = 0, kernel_w_ = 0, in_c_ = 0;
  std::vector<int8_t> rows_;
};

// Int8 convolution with fused bias, requantization, residual and ReLU, by
// `path` (its kernel, and the dense layout it reads, must be supported).
void conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const RequantEpilogue& e, int8_t* output,
            KernelPath path = kernel_path());
// The network's last layer: int32 accumulators plus bias, no requantization.
void conv2d_int32(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const int32_t* bias,
                  int32_t* output, KernelPath path = kernel_path());

// The epilogue operands `path`'s SIMD kernel (Avx2, Avx512Vnni) reads for
// `w`: `e` null for the network's int32 output (`bias` alone). conv2d makes
// them per call; a kernel's bind once per engine (kernel.h).
std::unique_ptr<PaddedEpilogue> conv_epilogue(const ConvGeometry& g, const PackedWeights& w, const RequantEpilogue* e,
                                              const int32_t* bias, KernelPath path);
// conv2d or conv2d_int32 on `path`'s SIMD kernel with those operands
// (`e.skip`: the run's residual): exactly one of `output` and `logits` is non-null.
void conv2d_simd(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const EpilogueTables& e,
                 int8_t* output, int32_t* logits, KernelPath path);

}  // namespace octet::cpu
