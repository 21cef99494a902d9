// Integer kernels of the CPU runtime. Activations are NHWC int8; every output
// is produced by runtime/requantize.h. Kernels parallelise with OpenMP.
#pragma once

#include <cstdint>
#include <vector>

namespace octet::cpu {

// A convolution; a linear layer is a 1x1 convolution over a 1x1 image.
struct ConvGeometry {
  int64_t batch = 0;
  int in_h = 1, in_w = 1, in_c = 0;
  int out_h = 1, out_w = 1, out_c = 0;
  int kernel = 1, stride = 1, padding = 0;
  int64_t rows() const { return batch * out_h * out_w; }        // GEMM M
  int64_t depth() const { return int64_t(kernel) * kernel * in_c; }  // GEMM K
};

// Per-output-channel epilogue: requantize(acc + bias, multiplier, skip, skip_multiplier, shift).
struct Epilogue {
  const int32_t* bias = nullptr;
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
  const int32_t* skip_multiplier = nullptr;  // with `skip`: a fused residual
  const int8_t* skip = nullptr;              // NHWC, same shape as the output
  bool relu = false;
};

// Weights packed once at load for the conv kernels. `ohwi` is [O][KH][KW][I],
// the order in which an NHWC patch is read.
class PackedWeights {
 public:
  PackedWeights() = default;
  PackedWeights(const int8_t* ohwi, int out_c, int64_t depth);
  int out_c() const { return out_c_; }
  int64_t depth() const { return depth_; }
  const int8_t* rows() const { return rows_.data(); }  // [O][depth], the layout given
  // Kernel-specific layouts (filled by the kernel that owns them).
  std::vector<int8_t> blocked;
  std::vector<int32_t> row_sums;

 private:
  int out_c_ = 0;
  int64_t depth_ = 0;
  std::vector<int8_t> rows_;
};

// Int8 convolution with fused bias, requantization, residual and ReLU.
void conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const Epilogue& e, int8_t* output);
// The network's last layer: int32 accumulators plus bias, no requantization.
void conv2d_int32(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const int32_t* bias,
                  int32_t* output);

// Float NCHW image batch -> int8 NHWC with quantize_input().
void quantize_input(const float* nchw, int64_t batch, int c, int h, int w, float scale, int8_t* nhwc);
void max_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int8_t* out);
// Average over each window (or the whole plane): the int32 window sum is requantized.
void avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int32_t multiplier,
              int32_t shift, int8_t* out);
void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int8_t* out);
void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, int8_t* out);
// He et al. option A: stride-2 subsample, `pad` zero channels on each side.
void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int pad, int8_t* out);
void relu(const int8_t* in, int64_t count, int8_t* out);

}  // namespace octet::cpu
