#include "runtime/cuda/pool.cuh"

#include "runtime/cuda/pool_kernel.h"

namespace octet::cuda {

namespace {

template <int Lanes>
__global__ void max_pool_kernel(const int8_t* __restrict__ in, const PoolShape s, int8_t* __restrict__ out) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) max_pool_item<Lanes>(in, s, item, out);
}

template <int Lanes>
__global__ void avg_pool_kernel(const int8_t* __restrict__ in, const PoolShape s, const PoolMultipliers m,
                                int8_t* __restrict__ out) {
  grid_dependency_sync();
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) avg_pool_item<Lanes>(in, s, m, item, out);
}

struct LaunchMaxPool {
  const int8_t* in;
  const PoolShape& s;
  int8_t* out;
  KernelStream stream;
  template <int Lanes>
  void run() const {
    launch_kernel(max_pool_kernel<Lanes>, elementwise_grid(s.items()), kBlockSize, 0, stream, in, s, out);
  }
};

struct LaunchAvgPool {
  const int8_t* in;
  const PoolShape& s;
  const PoolMultipliers& m;
  int8_t* out;
  KernelStream stream;
  template <int Lanes>
  void run() const {
    launch_kernel(avg_pool_kernel<Lanes>, elementwise_grid(s.items()), kBlockSize, 0, stream, in, s, m, out);
  }
};

__global__ void global_avg_pool_kernel(const int8_t* __restrict__ in, int64_t count, const GlobalPoolShape s,
                                       int8_t* __restrict__ out) {
  grid_dependency_sync();
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) global_avg_pool_element(in, s, e, out);
}

PoolShape pool_shape(const char* op, int64_t batch, const ActShape& in, int c, const ActShape& out, PoolAxis rows,
                     PoolAxis columns, int32_t in_zero_point, int32_t out_zero_point) {
  const auto fits = [](const PoolAxis& a, int size) {
    return a.kernel > 0 && a.stride > 0 && a.padding >= 0 && 2 * a.padding <= a.kernel &&
           a.kernel <= size + 2 * a.padding;
  };
  check(batch > 0 && c > 0 && c % 4 == 0 && fits(rows, in.h) && fits(columns, in.w) && out.h > 0 && out.w > 0,
        std::string("cuda ") + op + ": cannot pool " + std::to_string(in.h) + "x" + std::to_string(in.w) +
            " with kernel " + std::to_string(rows.kernel) + "x" + std::to_string(columns.kernel) + ", stride " +
            std::to_string(rows.stride) + "x" + std::to_string(columns.stride) + ", padding " +
            std::to_string(rows.padding) + "x" + std::to_string(columns.padding));
  const PoolShape s{batch, in.h, in.w, c, rows, columns, out.h, out.w, in_zero_point, out_zero_point};
  check(s.items() <= kMaxElementwiseCount, std::string("cuda ") + op + ": too many outputs");
  return s;
}

}  // namespace

void max_pool(const int8_t* in, int64_t batch, const ActShape& in_shape, int c, const ActShape& out_shape,
              const Node& n, int32_t zero_point, int8_t* out, KernelStream stream) {
  const PoolShape s =
      pool_shape("max_pool", batch, in_shape, c, out_shape, pool_rows(n), pool_columns(n), zero_point, zero_point);
  visit_pool_variant(s, LaunchMaxPool{in, s, out, stream});
  CUDA_CHECK_LAUNCH();
}

void avg_pool(const int8_t* in, int64_t batch, const ActShape& in_shape, int c, const ActShape& out_shape,
              const Node& n, const Int32Tensor& multipliers, int32_t shift, int32_t in_zero_point,
              int32_t out_zero_point, int8_t* out, KernelStream stream) {
  PoolShape s = pool_shape("avg_pool", batch, in_shape, c, out_shape, pool_rows(n), pool_columns(n), in_zero_point,
                           out_zero_point);
  s.exclude_padding = n.exclude_padding;
  const int64_t count = multipliers.numel();
  check(count == 1 || (count == int64_t{n.kernel} * kernel_width(n) && count <= kMostPoolMultipliers),
        "cuda avg_pool: " + std::to_string(count) + " multipliers for a " + std::to_string(n.kernel) + "x" +
            std::to_string(kernel_width(n)) + " kernel (one, or one per window count up to " +
            std::to_string(kMostPoolMultipliers) + ")");
  PoolMultipliers m{{}, static_cast<int>(count), shift};
  for (int64_t k = 0; k < count; ++k) m.by_count[k] = multipliers.data[static_cast<size_t>(k)];
  visit_pool_variant(s, LaunchAvgPool{in, s, m, out, stream});
  CUDA_CHECK_LAUNCH();
}

void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int32_t in_zero_point, int32_t out_zero_point, int8_t* out, KernelStream stream) {
  check(batch > 0 && h > 0 && w > 0 && c > 0 && batch * c <= kMaxElementwiseCount,
        "cuda global_avg_pool: bad shape " + std::to_string(batch) + "x" + std::to_string(h) + "x" + std::to_string(w) +
            "x" + std::to_string(c));
  const GlobalPoolShape s{int64_t(h) * w, c, stored_unsigned(in_zero_point), multiplier, shift,
                          stored_range(false, out_zero_point)};
  launch_kernel(global_avg_pool_kernel, elementwise_grid(batch * c), kBlockSize, 0, stream, in, batch * c, s, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace octet::cuda
