// The CUDA runtime's device layout executed on the host: a deliberately naive
// executor that keeps every value where the CUDA engine keeps it (padded NHWC
// in one arena at the planned offsets, packed weights), so that a wrong
// padding, packing or buffer reuse shows up on any machine, without nvcc or a
// GPU, as a difference from the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

struct LayoutRun {
  std::vector<std::vector<int16_t>> values;  // per node, NHWC without padding, q (empty for the output node)
  Int32Tensor logits;
  int64_t arena_bytes = 0;
};

// `imma`: cuda-imma's layout (channels aligned to 16, convs packed with its
// channels per tap); else cuda-dp4a's and cuda-cublaslt's. `retain_all`: no
// buffer reuse. The arena starts filled with garbage, like fresh device memory.
LayoutRun run_in_device_layout(const QuantizedModel& model, const std::vector<float>& images, int64_t batch,
                               bool retain_all, bool imma);

}  // namespace octet
