// OrderedGemm: every path (reference, AVX2, AVX-512 where the CPU has them)
// gives the bits of a naive triple loop written here, over shapes that
// exercise every tile width, partial row tiles, masked columns, both operand
// layouts octet uses, and accumulation into C.
#include "graph/ordered_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/support/wide_values.h"

namespace octet {
namespace {

struct Shape {
  int64_t rows, cols, depth;
};

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

std::string name(OrderedGemmPath p) { return ordered_gemm_path_name(p); }

// The product as the header defines it, independently of ordered_gemm.cpp:
// a triple loop, each output one std::fma chain in depth order.
void naive_gemm(const OrderedGemm& g) {
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t j = 0; j < g.cols; ++j) {
      float c = g.accumulate ? g.c[i * g.c_row_stride + j] : 0.0f;
      for (int64_t k = 0; k < g.depth; ++k)
        c = std::fma(g.a[i * g.a_row_stride + k * g.a_depth_stride], g.b[k * g.b_depth_stride + j], c);
      g.c[i * g.c_row_stride + j] = c;
    }
}

// A row-major [rows][depth] (a patch matrix) or, transposed, [depth][rows]
// (a Gram matrix's columns); B [depth][cols padded]; C with a wider stride,
// whose values between rows must stay as they were.
void check_all_paths(const Shape& s, bool a_transposed, bool accumulate) {
  const int64_t b_stride = ordered_gemm_padded(s.cols) + 16, c_stride = s.cols + 3;
  const std::vector<float> a = wide_values(static_cast<size_t>(s.rows * s.depth), 1);
  const std::vector<float> b = wide_values(static_cast<size_t>(std::max<int64_t>(s.depth, 1) * b_stride), 2);
  const std::vector<float> c0 = wide_values(static_cast<size_t>(s.rows * c_stride), 3);
  OrderedGemm g;
  g.rows = s.rows, g.cols = s.cols, g.depth = s.depth;
  g.a = a.data();
  g.a_row_stride = a_transposed ? 1 : s.depth;
  g.a_depth_stride = a_transposed ? s.rows : 1;
  g.b = b.data(), g.b_depth_stride = b_stride;
  g.c_row_stride = c_stride;
  g.accumulate = accumulate;
  std::vector<float> want = c0;
  g.c = want.data();
  naive_gemm(g);
  for (OrderedGemmPath path : ordered_gemm_paths()) {
    std::vector<float> got = c0;
    g.c = got.data();
    ordered_gemm(g, path);
    EXPECT_TRUE(same_bits(got, want)) << name(path) << " rows " << s.rows << " cols " << s.cols << " depth "
                                      << s.depth << (a_transposed ? " A transposed" : "")
                                      << (accumulate ? " accumulating" : "");
  }
}

TEST(OrderedGemm, EveryPathGivesTheBitsOfANaiveFmaChain) {
  const Shape shapes[] = {{1, 1, 1},   {5, 3, 27},   {24, 16, 144}, {25, 16, 144}, {13, 17, 9},
                          {12, 32, 288}, {7, 40, 50}, {8, 48, 31},   {30, 64, 576}, {6, 65, 20},
                          {3, 130, 12}, {50, 512, 64}, {2, 10, 400}, {17, 6, 25}};
  for (const Shape& s : shapes)
    for (bool a_transposed : {false, true})
      for (bool accumulate : {false, true}) check_all_paths(s, a_transposed, accumulate);
}

TEST(OrderedGemm, AnotherSummationOrderWouldBeCaught) {
  // The data above must tell orders apart, or the test would pass any kernel.
  const std::vector<float> a = wide_values(576, 1), b = wide_values(576, 2);
  float forward = 0, backward = 0;
  for (size_t k = 0; k < a.size(); ++k) forward = std::fma(a[k], b[k], forward);
  for (size_t k = a.size(); k-- > 0;) backward = std::fma(a[k], b[k], backward);
  EXPECT_NE(forward, backward);
}

TEST(OrderedGemm, ZeroDepthLeavesOrClearsC) {
  std::vector<float> b(16, 1.0f), c = {1, 2, 3};
  OrderedGemm g;
  g.rows = 1, g.cols = 3, g.depth = 0, g.b = b.data(), g.c = c.data(), g.c_row_stride = 3;
  std::vector<float> a(1);
  g.a = a.data();
  for (OrderedGemmPath path : ordered_gemm_paths()) {
    std::vector<float> kept = c, cleared = c;
    g.accumulate = true, g.c = kept.data();
    ordered_gemm(g, path);
    EXPECT_EQ(kept, c) << name(path);
    g.accumulate = false, g.c = cleared.data();
    ordered_gemm(g, path);
    EXPECT_EQ(cleared, std::vector<float>(3, 0.0f)) << name(path);
  }
}

TEST(OrderedGemm, TransposePaddedPadsWithZeros) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};  // [2][3]
  const std::vector<float> t = transpose_padded(w.data(), 2, 3);
  ASSERT_EQ(t.size(), size_t(3 * kOrderedGemmPadding));
  EXPECT_EQ(t[0], 1);
  EXPECT_EQ(t[1], 4);
  EXPECT_EQ(t[kOrderedGemmPadding], 2);
  EXPECT_EQ(t[2 * kOrderedGemmPadding + 1], 6);
  EXPECT_EQ(t[2], 0);
}

}  // namespace
}  // namespace octet
