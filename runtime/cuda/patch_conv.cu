#include "runtime/cuda/patch_conv.cuh"

#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

namespace {

__global__ void patch_conv_kernel(const float* __restrict__ nchw, const PatchConvShape s, float scale,
                                  const int8_t* __restrict__ weights, const RequantEpilogue e,
                                  int8_t* __restrict__ out) {
  grid_dependency_launch_next();  // the first kernel, launched plainly: the conv after it may start (it waits)
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) patch_conv_item(nchw, s, scale, weights, e, item, out);
}

}  // namespace

void patch_conv(const PatchConvShape& s, const float* nchw, float scale, const int8_t* weights,
                const RequantEpilogue& e, int8_t* out, cudaStream_t stream) {
  const int taps = s.input.kernel * s.input.kernel;
  check(taps >= 1 && taps <= kPatchConvMaxTaps && s.out_c > 0 && s.out_c % kPatchConvChannels == 0 &&
            s.row_bytes >= 4 * taps && s.row_bytes % 4 == 0 && s.items() <= kMaxElementwiseCount && e.bits == 8 &&
            (!e.skip || e.skip_bits == 8),
        "cuda patch_conv: cannot run a " + std::to_string(s.input.kernel) + "x" + std::to_string(s.input.kernel) +
            " conv to " + std::to_string(s.out_c) + " channels over " + std::to_string(s.input.items()) +
            " pixels with " + std::to_string(e.bits) + "-bit outputs");
  check(reinterpret_cast<uintptr_t>(weights) % 4 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0,
        "cuda patch_conv: weights must be 4-byte and the output 16-byte aligned");
  if (s.items() == 0) return;
  patch_conv_kernel<<<elementwise_grid(s.items()), kBlockSize, 0, stream>>>(nchw, s, scale, weights, e, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace octet::cuda
