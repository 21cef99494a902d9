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
  const int groups = conv ? n.groups : 1;
  const int64_t K = layer.weight.dim(1), rows = patch_rows(n, out, N), group_out = out.c / groups;
  const int64_t per_task = conv ? conv_rows_per_task(K) : kRowsPerTask;
  std::vector<std::vector<float>> weight_t(groups);  // each group's weight rows as an OrderedGemm's B
  for (int g = 0; g < groups; ++g) weight_t[g] = transpose_padded(layer.weight.ptr() + g * group_out * K, group_out, K);
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
