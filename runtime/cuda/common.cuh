// Helpers shared by the CUDA runtime's kernels and host code: the error-check
// macros, device buffers, launch arithmetic, and the description of an int8
// convolution that both backends use (its requantizing epilogue is in
// requant_epilogue.h). The device layout of activations and weights is in
// device_layout.h.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/requantize.h"
#include "runtime/cuda/conv_shape.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/int8x4.h"
#include "runtime/requant_epilogue.h"

// Check a CUDA runtime or cuBLAS(Lt) status; on failure throw octet::Error
// naming the statement, the function, the file and the line.
#define CUDA_CHECK(statement) ::octet::cuda::check_cuda((statement), #statement, __func__, __FILE__, __LINE__)
#define CUBLAS_CHECK(statement) ::octet::cuda::check_cublas((statement), #statement, __func__, __FILE__, __LINE__)
// After a kernel launch: reports a bad launch configuration at the launch site.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

namespace octet::cuda {

inline std::string error_site(const char* statement, const char* function, const char* file, int line) {
  return std::string(" in ") + statement + " (function " + function + ", " + file + ":" + std::to_string(line) + ")";
}

inline void check_cuda(cudaError_t status, const char* statement, const char* function, const char* file, int line) {
  if (status == cudaSuccess) return;
  fail(std::string("CUDA error ") + std::to_string(static_cast<int>(status)) + " " + cudaGetErrorName(status) + " (" +
       cudaGetErrorString(status) + ")" + error_site(statement, function, file, line));
}

inline void check_cublas(cublasStatus_t status, const char* statement, const char* function, const char* file,
                         int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail(std::string("cuBLAS error ") + std::to_string(static_cast<int>(status)) + " " + cublaslt().status_name(status) +
       " (" + cublaslt().status_string(status) + ")" + error_site(statement, function, file, line));
}

// The current device's compute capability, major * 10 + minor (an H100's: 90).
inline int current_compute_capability() {
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

// Threads per block of the one-thread-per-element kernels, and their grid.
constexpr int kBlockSize = 256;
inline dim3 elementwise_grid(int64_t count) { return dim3(static_cast<unsigned>(ceil_div(count, kBlockSize))); }
// Largest element count elementwise_grid can cover (grid.x < 2^31).
constexpr int64_t kMaxElementwiseCount = (int64_t{1} << 31) * kBlockSize - kBlockSize;

// An owning device allocation (cudaMalloc aligns to 256 bytes).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // a destructor must not throw; a failed free leaks at worst
  }
  T* get() const { return data_; }
  size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace octet::cuda
