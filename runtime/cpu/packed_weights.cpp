// Weights packed once at load: the rows the reference path reads, and the
// blocked layouts of the AVX2 and AVX-512 VNNI kernels where the CPU has them.
#include "runtime/cpu/conv_avx2.h"
#include "runtime/cpu/conv_vnni.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu {

namespace {
std::vector<int16_t> avx2_layout(const int8_t* ohwi, int out_c, int kernel, int in_c) {
  const int64_t depth = int64_t(kernel) * kernel * in_c;
  const int64_t in_c2 = (in_c + 1) / 2 * 2, padded_depth = int64_t(kernel) * kernel * in_c2;
  const int64_t blocks = (out_c + avx2::kBlock - 1) / avx2::kBlock;
  std::vector<int16_t> out(static_cast<size_t>(blocks * avx2::kBlock * padded_depth), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t padded_k = k / in_c * in_c2 + k % in_c;  // (ky, kx) position, then the channel
      const int64_t block = o / avx2::kBlock, lane = o % avx2::kBlock;
      out[((block * (padded_depth / 2) + padded_k / 2) * avx2::kBlock + lane) * 2 + padded_k % 2] =
          ohwi[o * depth + k];
    }
  return out;
}
}  // namespace

PackedWeights::PackedWeights(const int8_t* ohwi, int out_c, int kernel, int in_c)
    : out_c_(out_c), kernel_(kernel), in_c_(in_c), rows_(ohwi, ohwi + out_c * depth()) {
  const int64_t depth = this->depth();
  row_sums.assign(static_cast<size_t>(out_c), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) row_sums[o] += ohwi[o * depth + k];
  if (kernel_path_supported(KernelPath::Avx2)) blocked_pairs = avx2_layout(ohwi, out_c, kernel, in_c);
  if (!kernel_path_supported(KernelPath::Avx512Vnni)) return;
  const int64_t in_c4 = (in_c + 3) / 4 * 4, padded_depth = int64_t(kernel) * kernel * in_c4;
  const int64_t blocks = (out_c + vnni::kBlock - 1) / vnni::kBlock;
  blocked.assign(static_cast<size_t>(blocks * vnni::kBlock * padded_depth), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t padded_k = k / in_c * in_c4 + k % in_c;  // (ky, kx) position, then the channel
      const int64_t block = o / vnni::kBlock, lane = o % vnni::kBlock;
      blocked[((block * (padded_depth / 4) + padded_k / 4) * vnni::kBlock + lane) * 4 + padded_k % 4] =
          ohwi[o * depth + k];
    }
}

}  // namespace octet::cpu
