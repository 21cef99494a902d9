// The input image: float NCHW (normalised) -> int8 NHWC with padded channels.
#pragma once

#include "runtime/cuda/common.cuh"

namespace octet::cuda {

// `nhwc` gets `padded_c` channels per pixel, zeros past `channels`.
void quantize_input(const float* nchw, int64_t batch, int channels, int height, int width, int padded_c, float scale,
                    int8_t* nhwc, cudaStream_t stream);

}  // namespace octet::cuda
