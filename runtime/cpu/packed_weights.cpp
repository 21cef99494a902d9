// Weights packed once at load: the rows the reference path reads, and the
// blocked layouts of the AVX2 and AVX-512 VNNI kernels where the CPU has them.
#include "runtime/cpu/conv_avx2.h"
#include "runtime/cpu/conv_vnni.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu {

namespace {
// Weights in blocks of `block` output channels with `group` consecutive depth
// values per lane, [O/block][padded depth/group][block][group], each (ky, kx)
// position's channels padded with zeros to a multiple of `group`: the layout
// of the SIMD kernels (AVX2: 8 x 2 int16 and 8 x 4 int8, VNNI: 16 x 4 int8, or
// 16 x 2 int16 for a wide input).
template <typename T>
CacheLineVector<T> blocked_layout(const int8_t* ohwi, int out_c, int64_t taps, int in_c, int block, int group) {
  const int64_t depth = taps * in_c;
  const int64_t in_c_padded = (in_c + group - 1) / group * group, padded_depth = taps * in_c_padded;
  const int64_t blocks = (out_c + block - 1) / block;
  CacheLineVector<T> out(static_cast<size_t>(blocks * block * padded_depth), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t padded_k = k / in_c * in_c_padded + k % in_c;  // (ky, kx) position, then the channel
      out[((o / block * (padded_depth / group) + padded_k / group) * block + o % block) * group + padded_k % group] =
          ohwi[o * depth + k];
    }
  return out;
}
}  // namespace

PackedWeights::PackedWeights(const int8_t* ohwi, int out_c, int kernel_h, int kernel_w, int in_c, int input_bits)
    : out_c_(out_c), kernel_h_(kernel_h), kernel_w_(kernel_w), in_c_(in_c), rows_(ohwi, ohwi + out_c * depth()) {
  const int64_t depth = this->depth(), taps = int64_t(kernel_h) * kernel_w;
  row_sums.assign(static_cast<size_t>(out_c), 0);
  for (int o = 0; o < out_c; ++o)
    for (int64_t k = 0; k < depth; ++k) row_sums[o] += ohwi[o * depth + k];
  if (kernel_path_supported(KernelPath::Avx2)) {
    blocked_pairs = blocked_layout<int16_t>(ohwi, out_c, taps, in_c, avx2::kBlock, 2);
    blocked_quads = blocked_layout<int8_t>(ohwi, out_c, taps, in_c, avx2::kBlock, 4);
  }
  if (kernel_path_supported(KernelPath::Avx512Vnni) && input_bits > 8)
    blocked_wide = blocked_layout<int16_t>(ohwi, out_c, taps, in_c, vnni::kBlock, 2);
  else if (kernel_path_supported(KernelPath::Avx512Vnni))
    blocked = blocked_layout<int8_t>(ohwi, out_c, taps, in_c, vnni::kBlock, 4);
}

}  // namespace octet::cpu
