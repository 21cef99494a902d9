// GPTQ's statistics of a depthwise conv, taken for all channels at once from
// the NHWC activation (quant/depthwise_gram.cpp), must have the bits of the
// general path's: each group's patches gathered (gather_patches) and their
// Gram matrix taken by OrderedGemm, one fused multiply-add chain per entry in
// row order, continued across calls. Shapes cover strides, padding,
// dilation, a 5x5 kernel, 1x5 and 3x1 kernels (a depthwise Conv1d's is 1 x k),
// a channel block and a partial one.
#include "quant/depthwise_gram.h"

#include <gtest/gtest.h>

#include <cstring>

#include "graph/ordered_gemm.h"
#include "graph/patches.h"
#include "tests/support/wide_values.h"

namespace octet {
namespace {

struct DepthwiseCase {
  int kernel, stride, padding, dilation, kernel_w = 0;  // kernel_w 0: square
};

// The general path: group c's rows gathered, padded, and H's lower part added by OrderedGemm.
void add_gathered_gram(const Node& node, const ActShape& in, const ActShape& out, const float* act, int64_t first_row,
                       int64_t stride, int64_t picked, std::vector<Eigen::MatrixXf>& hessians) {
  const int64_t K = patch_size(node, in), padded = ordered_gemm_padded(K);
  for (int group = 0; group < node.groups; ++group) {
    std::vector<float> rows(static_cast<size_t>(picked * padded), 0.0f);
    for (int64_t k = 0; k < picked; ++k)
      gather_patches(node, in, out, act, first_row + k * stride, 1, rows.data() + k * padded, group);
    OrderedGemm g;
    g.rows = K, g.cols = K, g.depth = picked;
    g.a = rows.data(), g.a_row_stride = 1, g.a_depth_stride = padded;
    g.b = rows.data(), g.b_depth_stride = padded;
    g.c = hessians[group].data(), g.c_row_stride = K;
    g.accumulate = true;
    ordered_gemm(g);
  }
}

TEST(DepthwiseGram, SameBitsAsGatheredPatchesForEveryGeometry) {
  const int64_t channels = 70;  // a block of 64 and a partial one
  const ActShape in{channels, 9, 11};
  for (const DepthwiseCase& k : {DepthwiseCase{3, 1, 1, 1}, DepthwiseCase{3, 2, 1, 1}, DepthwiseCase{5, 1, 2, 1},
                                 DepthwiseCase{3, 1, 2, 2}, DepthwiseCase{3, 2, 0, 1}, DepthwiseCase{1, 1, 0, 1, 5},
                                 DepthwiseCase{3, 2, 1, 2, 1}}) {
    Node node;
    node.op = Op::Conv2d;
    node.kernel = k.kernel, node.kernel_w = k.kernel_w, node.stride = k.stride, node.padding = k.padding;
    node.dilation = k.dilation, node.groups = channels, node.channels = channels;
    const int64_t span = int64_t(k.kernel - 1) * k.dilation + 1;
    const int64_t span_w = int64_t(kernel_width(node) - 1) * k.dilation + 1;
    const ActShape out{channels, static_cast<int>((in.h + 2 * k.padding - span) / k.stride + 1),
                       static_cast<int>((in.w + 2 * k.padding - span_w) / k.stride + 1)};
    ASSERT_TRUE(one_channel_per_group(node, in));
    const int64_t batch = 3, taps = int64_t(k.kernel) * kernel_width(node);
    const std::vector<float> act = wide_values(static_cast<size_t>(batch * in.numel()), 7);
    const int64_t rows = patch_rows(node, out, batch);
    std::vector<Eigen::MatrixXf> fast(channels, Eigen::MatrixXf::Zero(taps, taps)), general = fast;
    // Two calls, the second continuing the chains: every 3rd row from row 1, then every 2nd from row 0.
    add_depthwise_gram(node, in, out, act.data(), 1, 3, (rows - 2) / 3 + 1, fast);
    add_gathered_gram(node, in, out, act.data(), 1, 3, (rows - 2) / 3 + 1, general);
    add_depthwise_gram(node, in, out, act.data(), 0, 2, (rows - 1) / 2 + 1, fast);
    add_gathered_gram(node, in, out, act.data(), 0, 2, (rows - 1) / 2 + 1, general);
    int64_t differ = 0, nonzero = 0;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t r = 0; r < taps; ++r)
        for (int64_t col = 0; col <= r; ++col) {
          const float x = fast[c](r, col), y = general[c](r, col);
          differ += std::memcmp(&x, &y, sizeof x) != 0;
          nonzero += y != 0;
        }
    EXPECT_EQ(differ, 0) << "kernel " << k.kernel << " stride " << k.stride << " padding " << k.padding
                         << " dilation " << k.dilation;
    EXPECT_GT(nonzero, channels * taps);  // not all zero (e.g. taps read from the wrong place)
  }
}

}  // namespace
}  // namespace octet
