#include "runtime/cuda/conv2d_grouped.cuh"

namespace octet::cuda {

namespace {

// One pixel a thread (grouped_conv_item): 256-thread blocks, five per
// multiprocessor (at most 51 registers; without the bound ptxas gives the 5x5
// variant 56, four blocks; with it, 48 and no spills). Four (depthwise_row_item):
// 64 sums and a kernel row's weights in registers, 128-thread blocks, three
// per multiprocessor (up to 170 registers; at 128 every variant spilled).
template <int Pixels>
constexpr int kThreads = Pixels == 1 ? kBlockSize : 128;
template <int Pixels>
constexpr int kResidentBlocks = Pixels == 1 ? 5 : 3;

template <int Lanes, int Kernel, int Pixels, bool Table>
__global__ void __launch_bounds__(kThreads<Pixels>, kResidentBlocks<Pixels>)
    conv2d_grouped_kernel(const GroupedConvShape s, const int8_t* __restrict__ input,
                          const int8_t* __restrict__ weights, const RequantEpilogue e, int8_t* __restrict__ output) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= s.items()) return;
  if constexpr (Pixels == 1)
    grouped_conv_item<Lanes, Kernel, Table>(input, weights, s, e, item, output);
  else
    depthwise_row_item<Pixels, Kernel, Table>(input, weights, s, e, item, output);
}

struct Launch {
  const GroupedConvShape& s;
  const int8_t* input;
  const int8_t* weights;
  const RequantEpilogue& e;
  int8_t* output;
  KernelStream stream;
  template <int Lanes, int Kernel, int Pixels, bool Table>
  void run() const {
    const dim3 grid(static_cast<unsigned>(ceil_div(s.items(), kThreads<Pixels>)));
    launch_kernel(conv2d_grouped_kernel<Lanes, Kernel, Pixels, Table>, grid, kThreads<Pixels>, 0, stream, s, input,
                  weights, e, output);
  }
};

}  // namespace

std::string conv2d_grouped_unsupported(const GroupedConvShape& s) {
  if (s.in_stored_c % 4 != 0 || s.out_stored_c % 4 != 0) return "stored channels are not a multiple of 4";
  if (s.in_per_group <= 0 || s.out_per_group <= 0 || s.kernel <= 0 || s.kernel_w <= 0 || s.stride <= 0 ||
      s.dilation <= 0)
    return "bad grouped convolution attributes";
  if (s.items() > kMaxElementwiseCount) return "too many outputs for one launch";
  return "";
}

void conv2d_grouped(const GroupedConvShape& s, const int8_t* input, const int8_t* weights, const RequantEpilogue& e,
                    int8_t* output, KernelStream stream) {
  const std::string why = conv2d_grouped_unsupported(s);
  check(why.empty(), "cuda conv2d_grouped: " + why);
  visit_grouped_variant(s, e, Launch{s, input, weights, e, output, stream});
}

}  // namespace octet::cuda
