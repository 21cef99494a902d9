// The input image: float NCHW (normalised) -> int8 NHWC with padded channels.
#pragma once

#include "runtime/cuda/common.cuh"

namespace octet::cuda {

// `nhwc` gets `padded_c` channels per pixel, zeros past `channels`.
void quantize_input(const float* nchw, int64_t batch, int channels, int height, int width, int padded_c, float scale,
                    int8_t* nhwc, cudaStream_t stream);
// Into cuda-imma's folded input (folded_input.h), `channels` at most 4.
void quantize_folded_input(const float* nchw, int64_t batch, int channels, int height, int width, float scale,
                           int8_t* folded, cudaStream_t stream);

}  // namespace octet::cuda
