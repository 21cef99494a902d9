#include "runtime/cuda/conv2d_dp4a.cuh"

#include <climits>
#include <cstdint>

#include "runtime/cuda/conv2d_dp4a_kernel.cuh"

namespace octet::cuda {

namespace {

template <int BM, int BN>
void launch_conv2d_dp4a_tiles(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                              const RequantEpilogue& e, int8_t* output, KernelStream stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(s.rows(), BM)), static_cast<unsigned>(ceil_div(s.out_c, BN)));
  constexpr int kShared = dp4a_shared_bytes(BM, BN);  // under the 48 KB a launch may take unasked
  if (unsigned_input)
    launch_kernel(conv2d_dp4a_kernel<BM, BN, true>, grid, kDp4aThreads, kShared, stream, s, input, weights, e,
                  output);
  else
    launch_kernel(conv2d_dp4a_kernel<BM, BN, false>, grid, kDp4aThreads, kShared, stream, s, input, weights, e,
                  output);
  CUDA_CHECK_LAUNCH();
}

// Narrow layers get taller tiles so that few threads idle on missing channels.
void launch_conv2d_dp4a(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                        const RequantEpilogue& e, int8_t* output, KernelStream stream) {
  if (s.out_c <= 16)
    launch_conv2d_dp4a_tiles<256, 16>(s, input, unsigned_input, weights, e, output, stream);
  else if (s.out_c <= 32)
    launch_conv2d_dp4a_tiles<128, 32>(s, input, unsigned_input, weights, e, output, stream);
  else
    launch_conv2d_dp4a_tiles<64, 64>(s, input, unsigned_input, weights, e, output, stream);
}

bool aligned4(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

}  // namespace

std::string conv2d_dp4a_unsupported(const ConvShape& s) {
  if (s.batch <= 0 || s.out_h <= 0 || s.out_w <= 0 || s.in_h <= 0 || s.in_w <= 0)
    return "empty shape (batch " + std::to_string(s.batch) + ")";
  if (s.kernel <= 0 || s.stride <= 0 || s.padding < 0) return "bad kernel, stride or padding";
  if (s.in_c <= 0 || s.in_c % 4 != 0)
    return "input channels " + std::to_string(s.in_c) + " are not padded to a positive multiple of 4";
  if (s.out_c <= 0 || s.out_c % 4 != 0)
    return "output channels " + std::to_string(s.out_c) + " are not padded to a positive multiple of 4";
  if (s.depth() > INT_MAX - kDp4aStepBytes) return "K = " + std::to_string(s.depth()) + " does not fit 32-bit indexing";
  if (ceil_div(s.rows(), 64) > INT_MAX) return std::to_string(s.rows()) + " output pixels exceed the grid";
  if (ceil_div(s.out_c, 16) > 65535) return std::to_string(s.out_c) + " output channels exceed the grid";
  return "";
}

void conv2d_dp4a(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                 const RequantEpilogue& e, int8_t* output, KernelStream stream) {
  const std::string why = conv2d_dp4a_unsupported(s);
  check(why.empty(), "cuda-dp4a conv2d cannot run this shape: " + why);
  check(aligned4(input) && aligned4(weights) && aligned4(output),
        "cuda-dp4a conv2d: input, weights and output must be 4-byte aligned");
  launch_conv2d_dp4a(s, input, unsigned_input, weights, e, output, stream);
}

}  // namespace octet::cuda
