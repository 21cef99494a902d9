// The cuda-dp4a convolution kernel's own source (runtime/cuda/conv2d_dp4a_kernel.cuh),
// compiled for the CPU and run there by tests/cuda/cuda_on_cpu.h: every block
// of each of its three tile shapes on the shapes of cuda-imma's table
// (tests/cuda/imma_cases.h; not the folded inputs, which only cuda-imma
// reads), whose outputs must equal the CPU runtime's (less the zero point:
// runtime/cuda/stored_value.h). The shapes take turns: signed tensors, and
// tensors at zero point -128 (stored uint8, the input multiplied by
// dp4a.u32.s32); a residual on every other shape.
// clang-format off
#include "tests/cuda/cuda_on_cpu.h"  // first: it stands in for CUDA in the kernel's header
#include "runtime/cuda/conv2d_dp4a_kernel.cuh"
// clang-format on

#include <gtest/gtest.h>

#include <utility>

#include "runtime/cuda/device_layout.h"
#include "tests/cuda/imma_cases.h"

namespace octet::cuda {
namespace {

using igemm::Conv;
using igemm::round_up;

// cuda-dp4a's layouts: channels padded with zeros to 4, stored less the zero point.
struct Dp4aTensors {
  ConvShape shape;
  std::vector<int8_t> input, weights, skip;  // NHWC; [out_c][kernel][kernel][in_c]; [rows][out_c]
};

Dp4aTensors dp4a_tensors(const Conv& v, const igemm::Problem& p, const igemm::Data& d) {
  Dp4aTensors t;
  ConvShape& s = t.shape;
  s.batch = v.batch, s.in_h = v.h, s.in_w = v.w, s.in_c = round_up(v.c, 4);
  s.out_h = p.out_h, s.out_w = p.out_w;
  s.out_c = round_up(v.out_c, 4), s.kernel = v.kernel, s.stride = v.stride, s.padding = v.padding;
  t.input.assign(size_t(v.batch) * v.h * v.w * s.in_c, 0);
  for (size_t pixel = 0; pixel < size_t(v.batch) * v.h * v.w; ++pixel)
    for (int c = 0; c < v.c; ++c)
      t.input[pixel * s.in_c + c] = int8_t(d.input[pixel * v.c + c] - d.input_zero_point);
  t.weights = pack_weight_rows(d.weights.data(), v.out_c, p.taps(), v.c, s.out_c, s.in_c, s.depth());
  if (!d.skip.empty()) {
    t.skip.assign(size_t(s.rows()) * s.out_c, 0);
    for (int64_t m = 0; m < s.rows(); ++m)
      for (int n = 0; n < v.out_c; ++n)
        t.skip[m * s.out_c + n] = int8_t(d.skip[m * v.out_c + n] - d.skip_zero_point);
  }
  return t;
}

// The kernel's output [rows][out_c] with BM x BN tiles, every block run on the CPU.
template <int BM, int BN>
std::vector<int8_t> run_kernel(const Dp4aTensors& t, const igemm::Data& d) {
  const ConvShape& s = t.shape;
  const RequantEpilogue e = igemm::epilogue_of(d, t.skip.data());
  std::vector<int8_t> output(size_t(s.rows()) * s.out_c, int8_t{0x33});
  for (int64_t bx = 0; bx < (s.rows() + BM - 1) / BM; ++bx)
    for (int by = 0; by < (s.out_c + BN - 1) / BN; ++by) {
      cuda_on_cpu::BlockRun run;
      run.threads = kDp4aThreads, run.shared_bytes = dp4a_shared_bytes(BM, BN);
      run.block = {unsigned(bx), unsigned(by), 0};
      cuda_on_cpu::run_block(run, [&] {
        if (d.input_zero_point != 0)
          conv2d_dp4a_kernel<BM, BN, true>(s, t.input.data(), t.weights.data(), e, output.data());
        else
          conv2d_dp4a_kernel<BM, BN, false>(s, t.input.data(), t.weights.data(), e, output.data());
      });
    }
  return output;
}

TEST(Dp4aKernelOnCpu, MatchesTheCpuRuntimeWithEveryTile) {
  int shapes = 0;
  for (int conv = 0; conv < int(std::size(igemm::kConvs)); ++conv) {
    const Conv& v = igemm::kConvs[conv];
    if (v.fold != ImageFold::kNone) continue;
    const StoredInput values = conv % 2 == 0 ? StoredInput::kSigned : StoredInput::kUnsigned;
    const igemm::Problem p = igemm::problem_of(v);
    const igemm::Data d = igemm::make_data(v, p, conv % 3 == 1, conv % 3 != 2, 3000 + 13 * conv, values);
    const std::vector<int8_t> expected = igemm::cpu_outputs(v, p, d);
    const Dp4aTensors t = dp4a_tensors(v, p, d);
    const std::pair<const char*, std::vector<int8_t>> tiles[] = {{"256x16", run_kernel<256, 16>(t, d)},
                                                                 {"128x32", run_kernel<128, 32>(t, d)},
                                                                 {"64x64", run_kernel<64, 64>(t, d)}};
    for (const auto& [tile, output] : tiles)
      for (int64_t m = 0; m < t.shape.rows(); ++m)
        for (int n = 0; n < t.shape.out_c; ++n) {
          const int8_t want = n < v.out_c ? int8_t(expected[m * v.out_c + n] - d.zero_point) : int8_t{0};
          ASSERT_EQ(output[m * t.shape.out_c + n], want)
              << igemm::conv_name(v) << ", tile " << tile << ", pixel " << m << ", channel " << n
              << (d.input_zero_point ? ", unsigned" : ", signed");
        }
    ++shapes;
  }
  EXPECT_EQ(shapes, 13);
}

}  // namespace
}  // namespace octet::cuda
