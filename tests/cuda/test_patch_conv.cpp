// cuda-imma's first conv straight from the float image
// (runtime/cuda/patch_conv_kernel.h), its own arithmetic run on the CPU over
// every patches-folded conv of tests/cuda/imma_cases.h: its stored outputs
// must be the CPU runtime's, with signed and uint8 outputs, residual, ReLU,
// and a fused activation's table.
#include <gtest/gtest.h>

#include <random>

#include "runtime/cuda/patch_conv_kernel.h"
#include "tests/cuda/imma_cases.h"

namespace octet::cuda::igemm {
namespace {

std::vector<int8_t> run_items(const Conv& v, const Problem& p, const Data& d, const RequantEpilogue& e) {
  const std::vector<float> image = image_of(v, d);
  PatchConvShape s;
  s.input = fold_of(v).patch_input(v.batch);
  s.out_c = p.out_c, s.row_bytes = p.packed_depth();
  std::vector<int8_t> out(size_t(p.rows()) * p.out_c, int8_t{0x33});
  for (int64_t item = 0; item < s.items(); ++item)
    patch_conv_item(image.data(), s, 1.0f, d.packed.data(), e, item, out.data());
  return out;
}

TEST(PatchConv, MatchesTheCpuRuntimeOnEveryPatchesFold) {
  int convs = 0;
  for (int i = 0; i < int(std::size(kConvs)); ++i) {
    const Conv& v = kConvs[i];
    if (v.fold != ImageFold::kPatches) continue;
    ++convs;
    const Problem p = problem_of(v);
    ASSERT_EQ(p.out_h * p.out_w * v.batch, p.rows());
    for (const StoredInput values : {StoredInput::kSigned, StoredInput::kUnsigned}) {
      const Data d = make_data(v, p, i % 2 == 0, values == StoredInput::kSigned, 4000 + i, values);
      const std::vector<int8_t> expected = cpu_outputs(v, p, d);
      const std::vector<int8_t> got = run_items(v, p, d, epilogue_of(d, d.device_skip.data()));
      for (int m = 0; m < p.rows(); ++m)
        for (int n = 0; n < p.out_c; ++n) {
          const int8_t want = n < v.out_c ? int8_t(expected[size_t(m) * v.out_c + n] - d.zero_point) : int8_t{0};
          ASSERT_EQ(got[size_t(m) * p.out_c + n], want)
              << conv_name(v) << (values == StoredInput::kUnsigned ? " uint8" : " int8") << ": pixel " << m
              << ", channel " << n;
        }
    }
  }
  EXPECT_GE(convs, 4) << "the table's patches folds";
}

// A fused activation (RequantEpilogue::table) maps each stored output, per channel; padding channels stay 0.
TEST(PatchConv, StoresThroughAFusedActivationTable) {
  const Conv v = {2, 9, 7, 3, 20, 3, 1, 1, ImageFold::kPatches};
  const Problem p = problem_of(v);
  const Data d = make_data(v, p, false, false, 4100);
  std::mt19937 rng(6);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> tables(size_t(v.out_c) * 256);
  for (int8_t& t : tables) t = static_cast<int8_t>(byte(rng));
  RequantEpilogue e = epilogue_of(d, nullptr);
  e.table = tables.data(), e.table_stride = 256, e.table_channels = v.out_c;
  const std::vector<int8_t> expected = cpu_outputs(v, p, d);
  const std::vector<int8_t> got = run_items(v, p, d, e);
  for (int m = 0; m < p.rows(); ++m)
    for (int n = 0; n < p.out_c; ++n) {
      const int8_t want =
          n < v.out_c ? tables[size_t(n) * 256 + uint8_t(expected[size_t(m) * v.out_c + n])] : int8_t{0};
      ASSERT_EQ(got[size_t(m) * p.out_c + n], want) << "pixel " << m << ", channel " << n;
    }
}

}  // namespace
}  // namespace octet::cuda::igemm
