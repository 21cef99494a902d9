// The per-output-channel epilogue operands of the SIMD conv kernels
// (conv_vnni.cpp, conv_avx2.cpp, depthwise_*.cpp): octet::requantize's
// operands widened to 64-bit lanes, padded to whole blocks of kEpilogueBlock
// channels so a kernel loads whole vectors (padding lanes compute harmless
// values that are never stored). PaddedEpilogue makes them once per engine
// (a kernel's bind, kernel.h) or per call.
#pragma once

#include <cstdint>
#include <vector>

namespace octet {
struct RequantEpilogue;
}

namespace octet::cpu {

constexpr int kEpilogueBlock = 16;  // a multiple of every kernel's block of output channels

namespace {  // internal linkage: files built with SIMD flags include this too
// `channels` rounded up to whole blocks of kEpilogueBlock: the length of the
// per-channel tables (the epilogue's, the depthwise taps' rows).
constexpr int64_t padded_channels(int64_t channels) {
  return (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
}
}  // namespace

struct EpilogueTables {
  const int32_t* bias = nullptr;  // the layer's bias, less what the kernel's activation offset adds
  // Null for conv2d_int32 (the bias alone).
  const int64_t* multiplier = nullptr;
  const int64_t* rounding = nullptr;  // 2^(shift - 1)
  const int64_t* shift = nullptr;
  const int64_t* skip_multiplier = nullptr;  // with a fused residual
  const int8_t* skip = nullptr;              // NHWC, same shape as the output
  int32_t lo = -128;                         // the lowest output: the zero point with a fused ReLU
  int32_t hi = 127;                          // the highest: highest_output of the output's bits
  int32_t zero_point = 0;                    // the output's, added after the shift
  int32_t skip_zero_point = 0;               // taken from each skip value
  int32_t activation_bound = 128;            // max_centered_input of the input (common/requantize.h)
  // Above 8: int16 outputs, or skip values (NodeQuant::bits; the AVX2 kernels
  // and the reference path read and make them).
  int32_t bits = 8, skip_bits = 8;
  // The AVX-512 kernels' operands of each block of 16 channels (epilogue_avx512.h
  // ChannelVectors), made by PaddedEpilogue::add_vnni_vectors; null elsewhere.
  const void* vectors = nullptr;
};

namespace vnni {
// Bytes of the ChannelVectors of `channels` channels, and those of `e`'s
// channels for accumulators of `depth` products written at `dst` (64-byte
// aligned). Defined in epilogue_vnni.cpp, compiled with AVX-512 flags: call
// only where the CPU has AVX-512 VNNI.
int64_t channel_vectors_bytes(int64_t channels);
void write_channel_vectors(const EpilogueTables& e, int64_t channels, int64_t depth, void* dst);
}  // namespace vnni

// Whether the narrow (32-bit) form of the SIMD epilogues (epilogue_avx2.h,
// epilogue_avx512.h) computes requantize's value for every one of `channels`
// channels whose accumulators sum `depth` products: where shift < 32, (acc +
// bias) << left and skip << left fit in int32 (|weight| <= 128 and
// |activation| <= activation_bound, so |acc| <= 128 * bound * depth; |skip|
// <= 2^skip_bits: 255 for int8). Then every 64-bit sum is below 2^63 too.
// Real models have shifts near 31 (a residual's) or more, with accumulators
// far below 2^29. (Defined in conv2d.cpp, built for the baseline.)
bool narrow_is_exact(int64_t depth, int64_t channels, const EpilogueTables& e);

// EpilogueTables made from a layer's own operands (its constructor is in
// conv2d.cpp, compiled for the baseline). Kernels that read each activation
// plus `offset` (VNNI: 128) add offset * row_sums[o] (the sum of channel o's
// weights) to each accumulator; the bias takes it back. Without `e`, the bias
// alone (the network's int32 output). `input_zero_point` and `input_bits`
// bound the accumulators (EpilogueTables::activation_bound). `e`'s residual
// operands are taken where it has skip_multiplier; its `skip` values too, where
// given (else the run sets tables.skip). The tables point into the object:
// it is neither copied nor moved.
struct PaddedEpilogue {
  std::vector<int32_t> bias;
  std::vector<int64_t> multiplier, rounding, shift, skip_multiplier;
  struct alignas(64) VectorLine {
    unsigned char bytes[64];
  };
  std::vector<VectorLine> vectors;  // add_vnni_vectors'
  EpilogueTables tables;

  PaddedEpilogue(int channels, const int32_t* bias_in, const RequantEpilogue* e, int32_t input_zero_point,
                 int32_t input_bits, uint32_t offset = 0, const int32_t* row_sums = nullptr);
  PaddedEpilogue(const PaddedEpilogue&) = delete;
  PaddedEpilogue& operator=(const PaddedEpilogue&) = delete;
  // Makes tables.vectors, for accumulators of `depth` products (after every
  // change to the tables): only where the CPU has AVX-512 VNNI.
  void add_vnni_vectors(int64_t depth);

 private:
  int channels_;
};

}  // namespace octet::cpu
