// Models with random weights, quantized without LibTorch, for runtime tests.
#pragma once

#include <string>

#include "models/checkpoint.h"
#include "models/registry.h"
#include "quant/quantize.h"

namespace octet {

// He-initialised weights, small random biases and batch-norm statistics.
Checkpoint random_checkpoint(const std::string& model, const ModelOptions& options, uint64_t seed);
// A small network of grouped and depthwise convolutions (none of the
// registry's has them) on 3 x 16 x 16 images, with random weights as above.
Checkpoint random_grouped_checkpoint(uint64_t seed);
// Dilated convolutions (dense, depthwise, grouped with stride 2), as
// DeepLab's, in a small network with a residual on 3 x 16 x 16 images.
Checkpoint random_dilated_checkpoint(uint64_t seed);
// Every operator of issue 40's ImageNet CNNs in one network on 3 x 16 x 16
// images: ReLU6, padded and ceil_mode pools, hard swish, a squeeze-and-
// excitation gate, SiLU, concats, channel slices and shuffle, LeakyReLU, sigmoid.
Checkpoint random_imagenet_ops_checkpoint(uint64_t seed);
// Convs with non-square kernels: Inception's 1x7 and 7x1 after Pad2d nodes, and a strided 3x5.
Checkpoint random_rectangular_checkpoint(uint64_t seed);
// Replaces the parameters of `checkpoint` with random ones (as above) for its graph.
void draw_random_params(Checkpoint* checkpoint, uint64_t seed);
// Normalised-looking images: N x C x H x W values in about [-2, 2].
std::vector<float> random_images(int64_t count, const ActShape& shape, uint64_t seed);
// Max amax and round-to-nearest weights: the quickest recipe, for tests of
// what comes after the quantizer.
QuantizeOptions quick_quantize_options();
// Folds, calibrates on `calibration` random images and quantizes.
QuantizedModel quantize_random(const Checkpoint& checkpoint, const QuantizeOptions& options, int64_t calibration = 64,
                               uint64_t seed = 11);

}  // namespace octet
