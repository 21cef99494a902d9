#include "graph/ops/float_reference.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "graph/ordered_gemm.h"
#include "graph/patches.h"

namespace octet::ops {

namespace {
// Rows of im2col handled per task: bounds the scratch buffer (to 8 MB for
// wide patches) and gives OpenMP work to share (a late ResNet-18 layer has
// only 2048 rows per batch of 128).
constexpr int64_t kRowsPerTask = 2048;
int64_t conv_rows_per_task(int64_t patch) { return std::min<int64_t>(kRowsPerTask, (int64_t(1) << 21) / patch); }

// A depthwise conv (one output channel per input channel) without im2col:
// each output is the chain an OrderedGemm of its patch would compute, a
// fused multiply-add per tap in (ky, kx) order from 0, a zero input outside
// the image, then the bias. The same bits, with the channels as vector
// lanes instead of one 1-column product per channel.
void run_depthwise_float(const FloatOpArgs& a) {
  const Node& n = a.node;
  const ActShape in = a.in[0], out = a.out;
  const int64_t C = out.c, kw = kernel_width(n), taps = n.kernel * kw, rows = patch_rows(n, out, a.inputs[0]->dim(0));
  const float* x = a.inputs[0]->ptr();
  const float* bias = a.layer->bias.data();
  std::vector<float> weight(static_cast<size_t>(taps * C));  // tap-major, so a tap's channels are adjacent
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < taps; ++t) weight[t * C + c] = a.layer->weight.data[c * taps + t];
  const std::vector<float> zeros(static_cast<size_t>(C), 0.0f);
#pragma omp parallel for schedule(static) if (rows * C * taps >= kMinParallelElements)
  for (int64_t m = 0; m < rows; ++m) {
    const int64_t ox = m % out.w, oy = (m / out.w) % out.h, b = m / (int64_t(out.w) * out.h);
    float* y = a.y.ptr() + m * C;
    std::fill(y, y + C, 0.0f);
    for (int64_t ky = 0; ky < n.kernel; ++ky) {
      const int64_t iy = oy * n.stride - n.padding + ky * n.dilation;
      for (int64_t kx = 0; kx < kw; ++kx) {
        const int64_t ix = ox * n.stride - n.padding + kx * n.dilation;
        const bool inside = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
        const float* pixel = inside ? x + ((b * in.h + iy) * in.w + ix) * C : zeros.data();
        const float* w = weight.data() + (ky * kw + kx) * C;
        for (int64_t c = 0; c < C; ++c) y[c] = std::fma(pixel[c], w[c], y[c]);
      }
    }
    for (int64_t c = 0; c < C; ++c) y[c] += bias[c];
  }
}

// A dense stride-1 conv without im2col: a task's output lines (about
// kRowsPerTask pixels) read their input lines zero-padded into one buffer,
// then one OrderedGemm per kernel row ky with the padded pixels as rows, where
// a patch's taps in that kernel row are kw * C adjacent floats; ky > 0 continue
// the chains (accumulate), so each output is its im2col row's chain in
// (ky, kx, c) order: the same bits. The rows of the kw - 1 padded columns past
// the output's width in each padded line are computed and dropped, and each
// call packs its part of the weights: worth it only on wide images (below).
void run_stride1_conv_float(const FloatOpArgs& a, const std::vector<float>& weight_t) {
  const Node& n = a.node;
  const ActShape in = a.in[0], out = a.out;
  const int64_t C = in.c, k = n.kernel, kw = kernel_width(n), pad = n.padding, padded_w = in.w + 2 * pad;
  const int64_t lines = std::clamp<int64_t>(kRowsPerTask / padded_w, 1, out.h), blocks = (out.h + lines - 1) / lines;
  const int64_t tap_row = kw * C, b_stride = ordered_gemm_padded(out.c);
  const float* bias = a.layer->bias.data();
#pragma omp parallel for schedule(dynamic)
  for (int64_t task = 0; task < a.inputs[0]->dim(0) * blocks; ++task) {
    const int64_t b = task / blocks, y0 = task % blocks * lines, count = std::min(lines, out.h - y0);
    // Padded lines y0 .. y0 + count + k - 2, and kw - 1 pixels more that the last dropped rows read.
    std::vector<float> padded(static_cast<size_t>(((count + k - 1) * padded_w + kw - 1) * C), 0.0f);
    const float* x = a.inputs[0]->ptr() + b * in.numel();
    for (int64_t line = 0; line < count + k - 1; ++line) {
      const int64_t iy = y0 + line - pad;
      if (iy >= 0 && iy < in.h)
        std::copy(x + iy * in.w * C, x + (iy + 1) * in.w * C, padded.data() + (line * padded_w + pad) * C);
    }
    const int64_t rows = count * padded_w;
    std::unique_ptr<float[]> sums(new float[static_cast<size_t>(rows * out.c)]);  // ky = 0 writes every value
    for (int64_t ky = 0; ky < k; ++ky) {
      OrderedGemm gemm;
      gemm.rows = rows, gemm.cols = out.c, gemm.depth = tap_row;
      gemm.a = padded.data() + ky * padded_w * C, gemm.a_row_stride = C, gemm.a_depth_stride = 1;
      gemm.b = weight_t.data() + ky * tap_row * b_stride, gemm.b_depth_stride = b_stride;
      gemm.c = sums.get(), gemm.c_row_stride = out.c;
      gemm.accumulate = ky > 0;
      ordered_gemm(gemm);
    }
    float* y = a.y.ptr() + (b * out.h + y0) * out.w * out.c;
    for (int64_t line = 0; line < count; ++line)
      for (int64_t ox = 0; ox < out.w; ++ox)
        for (int64_t c = 0; c < out.c; ++c)
          y[(line * out.w + ox) * out.c + c] = sums[(line * padded_w + ox) * out.c + c] + bias[c];
  }
}
}  // namespace

void run_weighted_float(const FloatOpArgs& a) {
  const Node& n = a.node;
  if (is_depthwise(n, a.in[0].c)) return run_depthwise_float(a);
  const FloatTensor& x = *a.inputs[0];
  const int64_t N = x.dim(0);
  const ActShape in = a.in[0], out = a.out;
  const FloatLayer& layer = *a.layer;
  const bool conv = n.op == Op::Conv2d;
  const int groups = conv ? n.groups : 1;
  const int64_t K = layer.weight.dim(1), rows = patch_rows(n, out, N), group_out = out.c / groups;
  const int64_t per_task = conv ? conv_rows_per_task(K) : kRowsPerTask;
  std::vector<std::vector<float>> weight_t(groups);  // each group's weight rows as an OrderedGemm's B
  for (int g = 0; g < groups; ++g) weight_t[g] = transpose_padded(layer.weight.ptr() + g * group_out * K, group_out, K);
  // At most an eighth of the rows dropped and 256 rows or more per image: with
  // every stride-1 conv this way, ResNet-18's calibration pass took 12% longer
  // than with gathered patches (its 8x8 and 4x4 layers drop a fifth and a
  // third of their rows, 80 and 24 per image, and pack the weights for each);
  // with these limits ResNet-20's took 11% less and ResNet-18's 4% less.
  const int64_t padded_w = in.w + 2 * n.padding;
  if (conv && groups == 1 && n.stride == 1 && n.dilation == 1 && 8 * (kernel_width(n) - 1) <= padded_w &&
      out.h * padded_w >= 256)
    return run_stride1_conv_float(a, weight_t[0]);
#pragma omp parallel for schedule(dynamic)
  for (int64_t first = 0; first < rows; first += per_task) {
    const int64_t count = std::min(per_task, rows - first);
    std::unique_ptr<float[]> patches;  // not zero-filled: gather_patches writes every value
    if (conv) patches.reset(new float[static_cast<size_t>(count * K)]);
    for (int g = 0; g < groups; ++g) {
      if (conv) gather_patches(n, in, out, x.ptr(), first, count, patches.get(), g);
      OrderedGemm gemm;
      gemm.rows = count, gemm.cols = group_out, gemm.depth = K;
      gemm.a = conv ? patches.get() : x.ptr() + first * K;
      gemm.a_row_stride = K, gemm.a_depth_stride = 1;
      gemm.b = weight_t[g].data(), gemm.b_depth_stride = ordered_gemm_padded(group_out);
      gemm.c = a.y.ptr() + first * out.c + g * group_out, gemm.c_row_stride = out.c;
      ordered_gemm(gemm);
      for (int64_t r = 0; r < count; ++r)
        for (int64_t c = 0; c < group_out; ++c) gemm.c[r * out.c + c] += layer.bias[g * group_out + c];
    }
  }
}

}  // namespace octet::ops
