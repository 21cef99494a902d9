// The input image: float NCHW (normalised) -> int8 NHWC with padded channels.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/folded_input.h"

namespace octet::cuda {

// `nhwc` gets `padded_c` channels per pixel, zeros past `channels`.
void quantize_input(const float* nchw, int64_t batch, int channels, int height, int width, int padded_c, float scale,
                    int8_t* nhwc, cudaStream_t stream);
// Into cuda-imma's folded image (folded_input.h).
void quantize_folded_input(const float* nchw, int64_t batch, const ImageFold& fold, float scale, int8_t* stored,
                           cudaStream_t stream);

}  // namespace octet::cuda
