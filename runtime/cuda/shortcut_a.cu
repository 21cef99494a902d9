#include "runtime/cuda/shortcut_a.cuh"

#include "runtime/cuda/channel_ops_kernel.h"

namespace octet::cuda {

namespace {

__global__ void shortcut_a_kernel(const int8_t* __restrict__ in, int64_t count, const ShortcutAShape s,
                                  int8_t* __restrict__ out) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) shortcut_a_element(in, s, e, out);
}

}  // namespace

void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int in_stride, int pad, int out_stride,
                int8_t* out, KernelStream stream) {
  const int64_t count = batch * ((h + 1) / 2) * ((w + 1) / 2) * out_stride;
  check(batch > 0 && h > 0 && w > 0 && c > 0 && pad >= 0 && in_stride >= c && out_stride >= c + 2 * pad &&
            count <= kMaxElementwiseCount,
        "cuda shortcut_a: bad shape " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) +
            " with " + std::to_string(pad) + " padding channels");
  launch_kernel(shortcut_a_kernel, elementwise_grid(count), kBlockSize, 0, stream, in, count,
                ShortcutAShape{h, w, c, in_stride, pad, out_stride}, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace octet::cuda
