#include "runtime/cuda/shortcut_a.cuh"

namespace octet::cuda {

namespace {

// One thread per output byte.
__global__ void shortcut_a_kernel(const int8_t* __restrict__ in, int64_t count, int h, int w, int c, int in_stride,
                                  int pad, int out_stride, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int out_h = (h + 1) / 2, out_w = (w + 1) / 2;
  const int oc = static_cast<int>(i % out_stride);
  const int ox = static_cast<int>((i / out_stride) % out_w);
  const int oy = static_cast<int>((i / (int64_t(out_stride) * out_w)) % out_h);
  const int64_t n = i / (int64_t(out_stride) * out_w * out_h);
  const int ic = oc - pad;
  out[i] = ic >= 0 && ic < c ? in[((n * h + 2 * oy) * w + 2 * ox) * in_stride + ic] : int8_t{0};
}

void launch_shortcut_a(const int8_t* in, int64_t count, int h, int w, int c, int in_stride, int pad, int out_stride,
                       int8_t* out, cudaStream_t stream) {
  shortcut_a_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(in, count, h, w, c, in_stride, pad, out_stride,
                                                                        out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int in_stride, int pad, int out_stride,
                int8_t* out, cudaStream_t stream) {
  const int64_t count = batch * ((h + 1) / 2) * ((w + 1) / 2) * out_stride;
  check(batch > 0 && h > 0 && w > 0 && c > 0 && pad >= 0 && in_stride >= c && out_stride >= c + 2 * pad &&
            count <= kMaxElementwiseCount,
        "cuda shortcut_a: bad shape " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) +
            " with " + std::to_string(pad) + " padding channels");
  launch_shortcut_a(in, count, h, w, c, in_stride, pad, out_stride, out, stream);
}

}  // namespace octet::cuda
