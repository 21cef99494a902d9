#include "graph/ops/float_reference.h"

#include <algorithm>
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
}  // namespace

void run_weighted_float(const FloatOpArgs& a) {
  const Node& n = a.node;
  const FloatTensor& x = *a.inputs[0];
  const int64_t N = x.dim(0);
  const ActShape in = a.in[0], out = a.out;
  const FloatLayer& layer = *a.layer;
  const bool conv = n.op == Op::Conv2d;
  const int64_t K = layer.weight.dim(1), rows = patch_rows(n, out, N);
  const int64_t per_task = conv ? conv_rows_per_task(K) : kRowsPerTask;
  const std::vector<float> weight_t = transpose_padded(layer.weight.ptr(), out.c, K);
#pragma omp parallel for schedule(dynamic)
  for (int64_t first = 0; first < rows; first += per_task) {
    const int64_t count = std::min(per_task, rows - first);
    std::unique_ptr<float[]> patches;  // not zero-filled: gather_patches writes every value
    if (conv) {
      patches.reset(new float[static_cast<size_t>(count * K)]);
      gather_patches(n, in, out, x.ptr(), first, count, patches.get());
    }
    OrderedGemm g;
    g.rows = count, g.cols = out.c, g.depth = K;
    g.a = conv ? patches.get() : x.ptr() + first * K;
    g.a_row_stride = K, g.a_depth_stride = 1;
    g.b = weight_t.data(), g.b_depth_stride = ordered_gemm_padded(out.c);
    g.c = a.y.ptr() + first * out.c, g.c_row_stride = out.c;
    ordered_gemm(g);
    for (int64_t r = 0; r < count; ++r)
      for (int c = 0; c < out.c; ++c) g.c[r * out.c + c] += layer.bias[c];
  }
}

}  // namespace octet::ops
