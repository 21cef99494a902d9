// Convolutions for the cuda-imma tests on the CPU (test_implicit_gemm.cpp's
// emulation and test_imma_kernel_on_cpu.cpp's run of the kernel itself): a
// table of shapes, random data in the CPU runtime's layouts and in
// cuda-imma's, and what the results must be.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/cuda/folded_input.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda::igemm {

struct Conv {
  int batch, h, w, c, out_c, kernel, stride, padding;
  ImageFold::Kind fold = ImageFold::kNone;  // the input stored folded (folded_input.h), as the engine stores an image
};

inline const Conv kConvs[] = {
    {1, 8, 8, 3, 16, 3, 1, 1},     // first layer, batch 1: 4-byte words, K = 9 x 4
    {2, 9, 7, 3, 64, 3, 2, 1},     // first layer, odd sizes, stride 2
    {2, 6, 6, 6, 10, 5, 1, 2},     // LeNet-like: 6 channels in words, kernel 5
    {1, 6, 6, 16, 32, 3, 1, 1},    // 16 channels: one vector per tap
    {2, 5, 5, 64, 64, 3, 1, 1},    // odd spatial size
    {3, 8, 8, 64, 128, 1, 2, 0},   // 1x1 stride-2 shortcut
    {1, 4, 4, 256, 16, 3, 1, 1},   // batch 1, long K
    {2, 7, 7, 13, 20, 5, 2, 2},    // odd channels padded to 16, kernel 5 stride 2
    {1, 3, 3, 32, 144, 3, 1, 0},   // a 1x1 output, channels over several tiles
    {4, 5, 5, 48, 16, 1, 1, 0},    // pointwise
    {1, 2, 2, 512, 32, 3, 1, 1},   // ResNet-18 layer4-like at batch 1
    {2, 16, 16, 32, 64, 3, 1, 1},  // several row tiles of every size
    {1, 32, 32, 3, 16, 3, 1, 1},   // ResNet-20's first layer at batch 1
    // Folded 2 x 2: odd sizes (a last stored row and column half outside), ResNet-50's conv1
    // (7x7/2) on a small image, 4 channels and kernel 5, a 1x1 conv reading one source pixel of four.
    {2, 9, 7, 3, 64, 3, 2, 1, ImageFold::kSpaceToDepth},
    {1, 18, 16, 3, 64, 7, 2, 3, ImageFold::kSpaceToDepth},
    {1, 11, 12, 4, 16, 5, 2, 2, ImageFold::kSpaceToDepth},
    {3, 8, 8, 2, 32, 1, 2, 0, ImageFold::kSpaceToDepth},
    // Folded into patches: odd sizes, ResNet-20's first layer on a smaller image, kernel 2 without
    // padding (16 bytes), kernel 4 of one channel (64 bytes).
    {2, 9, 7, 3, 64, 3, 1, 1, ImageFold::kPatches},
    {1, 12, 10, 3, 16, 3, 1, 1, ImageFold::kPatches},
    {2, 6, 5, 4, 32, 2, 1, 0, ImageFold::kPatches},
    {1, 7, 8, 1, 16, 4, 1, 2, ImageFold::kPatches},
};

std::string conv_name(const Conv& v);
Problem problem_of(const Conv& v);
// The folded input's description and the conv as a graph node (for folded_input.h).
ImageFold fold_of(const Conv& v);
Node conv_node(const Conv& v);

// Test parameters: (index in kConvs, tile configuration), every pair the
// tile can run (unsupported() is empty: the others are refused on every
// machine, so no test is made for them), and their names in test names.
std::vector<std::tuple<int, int>> runnable_shapes_and_tiles();
inline auto every_runnable_shape_and_tile() { return ::testing::ValuesIn(runnable_shapes_and_tiles()); }
std::string shape_and_tile_name(const std::tuple<int, int>& shape_and_tile);

// Random tensors in the CPU runtime's layouts and in cuda-imma's.
struct Data {
  std::vector<int8_t> input;                                      // NHWC, c channels (CPU)
  std::vector<int8_t> device_input;                               // NHWC, in_stride channels, garbage in the padding;
                                                                  // or folded, zeros in the padding
  std::vector<int8_t> weights;                                    // [out_c][kernel][kernel][c] (CPU)
  std::vector<int8_t> packed;                                     // [stored out_c][packed_depth]
  std::vector<int32_t> bias, multiplier, shift, skip_multiplier;  // stored out_c each, padding requantizes to 0
  std::vector<int8_t> skip, device_skip;  // residual: [M][out_c] and [M][stored out_c]; empty without
  bool relu = false;
  // Zero points (the CPU's bytes are q; the device's q - zero point,
  // runtime/cuda/stored_value.h): the input's, the output's, the residual's.
  int32_t input_zero_point = 0, zero_point = 0, skip_zero_point = 0;
  // Bits (NodeQuant::bits): above 8, `wide_input` and `skip` hold int16 values
  // (as bytes) and the device's copies two planes; the output likewise.
  int32_t input_bits = 8, bits = 8, skip_bits = 8;
  std::vector<int16_t> wide_input;  // NHWC, c channels (CPU), where input_bits > 8
  cuda::StoredInput stored_input() const {
    return input_bits > 8 ? StoredInput::kWide : input_zero_point != 0 ? StoredInput::kUnsigned : StoredInput::kSigned;
  }
};
// The input as the float NCHW image whose quantization at scale 1 it is.
std::vector<float> image_of(const Conv& v, const Data& d);

// `values`: kUnsigned puts every tensor at zero point -128 (stored uint8);
// kWide makes the input (with as many bits as K allows, up to 16), the output
// and the residual wide. A folded input, an image, stays signed.
Data make_data(const Conv& v, const Problem& p, bool residual, bool relu, uint64_t seed,
               StoredInput values = StoredInput::kSigned);

// The requantization of `d` as a kernel reads it, with `skip` (the residual in
// that kernel's layout, or null) where `d` has one.
RequantEpilogue epilogue_of(const Data& d, const int8_t* skip);

// The direct convolution's int32 accumulators [M][out_c] (no bias).
std::vector<int32_t> direct_accumulators(const Conv& v, const Problem& p, const Data& d);

// The CPU runtime's outputs [M][out_c] (q, not less the zero point): int8,
// or with d.bits > 8 int16 values as bytes.
std::vector<int8_t> cpu_outputs(const Conv& v, const Problem& p, const Data& d);

}  // namespace octet::cuda::igemm
