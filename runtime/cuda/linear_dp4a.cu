#include "runtime/cuda/linear_dp4a.cuh"

#include <climits>

#include "runtime/cuda/linear_dp4a_kernel.cuh"

namespace octet::cuda {

namespace {

dim3 warp_grid(int64_t outputs) { return dim3(static_cast<unsigned>(ceil_div(outputs, kLinearWarpsPerBlock))); }

void launch_linear_dp4a(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int out_c,
                        const RequantEpilogue& e, int8_t* y, KernelStream stream) {
  const int64_t outputs = rows * out_c;
  launch_kernel(linear_dp4a_kernel, warp_grid(outputs), 32 * kLinearWarpsPerBlock, 0, stream, x, unsigned_x, w,
                outputs, depth, out_c, e, y);
  CUDA_CHECK_LAUNCH();
}

void launch_linear_dp4a_logits(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth,
                               int classes, const int32_t* bias, int32_t* logits, KernelStream stream) {
  const int64_t outputs = rows * classes;
  launch_kernel(linear_dp4a_logits_kernel, warp_grid(outputs), 32 * kLinearWarpsPerBlock, 0, stream, x, unsigned_x,
                w, outputs, depth, classes, bias, logits);
  CUDA_CHECK_LAUNCH();
}

bool aligned4(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

void check_linear(const int8_t* x, const int8_t* w, const void* y, int64_t rows, int64_t depth, int out_c) {
  const std::string why = linear_dp4a_unsupported(rows, depth, out_c);
  check(why.empty(), "cuda-dp4a linear cannot run this shape: " + why);
  check(aligned4(x) && aligned4(w) && aligned4(y),
        "cuda-dp4a linear: input, weights and output must be 4-byte aligned");
}

}  // namespace

std::string linear_dp4a_unsupported(int64_t rows, int64_t depth, int out_c) {
  if (rows <= 0 || out_c <= 0)
    return "empty shape (" + std::to_string(rows) + " rows, " + std::to_string(out_c) + " outputs)";
  if (depth <= 0 || depth % 4 != 0) return "K = " + std::to_string(depth) + " is not a positive multiple of 4";
  if (ceil_div(rows * out_c, kLinearWarpsPerBlock) > INT_MAX) return "too many outputs for the grid";
  return "";
}

void linear_dp4a(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int out_c,
                 const RequantEpilogue& e, int8_t* y, KernelStream stream) {
  check_linear(x, w, y, rows, depth, out_c);
  launch_linear_dp4a(x, unsigned_x, w, rows, depth, out_c, e, y, stream);
}

void linear_dp4a_logits(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int classes,
                        const int32_t* bias, int32_t* logits, KernelStream stream) {
  check_linear(x, w, logits, rows, depth, classes);
  launch_linear_dp4a_logits(x, unsigned_x, w, rows, depth, classes, bias, logits, stream);
}

}  // namespace octet::cuda
