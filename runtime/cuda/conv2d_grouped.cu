#include "runtime/cuda/conv2d_grouped.cuh"

namespace octet::cuda {

namespace {

template <int Lanes>
__global__ void conv2d_grouped_kernel(const GroupedConvShape s, const int8_t* __restrict__ input,
                                      const int8_t* __restrict__ weights, const RequantEpilogue e,
                                      int8_t* __restrict__ output) {
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) grouped_conv_item<Lanes>(input, weights, s, e, item, output);
}

}  // namespace

std::string conv2d_grouped_unsupported(const GroupedConvShape& s) {
  if (s.in_stored_c % 4 != 0 || s.out_stored_c % 4 != 0) return "stored channels are not a multiple of 4";
  if (s.in_per_group <= 0 || s.out_per_group <= 0 || s.kernel <= 0 || s.stride <= 0 || s.dilation <= 0)
    return "bad grouped convolution attributes";
  if (s.items() > kMaxElementwiseCount) return "too many outputs for one launch";
  return "";
}

void conv2d_grouped(const GroupedConvShape& s, const int8_t* input, const int8_t* weights, const RequantEpilogue& e,
                    int8_t* output, cudaStream_t stream) {
  const std::string why = conv2d_grouped_unsupported(s);
  check(why.empty(), "cuda conv2d_grouped: " + why);
  const dim3 grid = elementwise_grid(s.items());
  if (s.lanes() == 16)
    conv2d_grouped_kernel<16><<<grid, kBlockSize, 0, stream>>>(s, input, weights, e, output);
  else
    conv2d_grouped_kernel<4><<<grid, kBlockSize, 0, stream>>>(s, input, weights, e, output);
  CUDA_CHECK_LAUNCH();
}

}  // namespace octet::cuda
