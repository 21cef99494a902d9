// The requantizing epilogue of a conv or linear layer, one type for every
// backend: its per-output-channel parameters and the step through
// common/requantize.h. Plain C++ with host+device functions (no CUDA header):
// the CPU kernels, the CUDA kernels and the CUDA kernels compiled for the
// CPU (tests/cuda/cuda_on_cpu.h) share it.
#pragma once

#include <cstdint>

#include "common/requantize.h"

namespace octet {

// Per-output-channel requantization: requantize(acc + bias, multiplier,
// skip, skip_multiplier, shift). Every array has one entry per output
// channel (on CUDA: per stored channel, the padding channels having bias 0,
// multiplier 0 and shift 1 so that they come out 0), in the memory of the
// backend that reads it.
struct RequantEpilogue {
  const int32_t* bias = nullptr;
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
  const int32_t* skip_multiplier = nullptr;  // with `skip`
  const int8_t* skip = nullptr;              // fused residual: same layout as the output, or null
  bool relu = false;
  int32_t zero_point = 0;       // the output's (graph/node_quant.h)
  int32_t skip_zero_point = 0;  // the fused residual's
  // The output's and the residual's bits (NodeQuant::bits): above 8, int16
  // values (`skip` then points at their bytes); on CUDA, cuda-imma's two
  // planes (cuda/stored_value.h), its other kernels take 8 only.
  int32_t bits = 8, skip_bits = 8;
  // CUDA: an activation or PRelu fused after the layer (cuda/device_layout.h
  // ValueLayout::fused_activation), its stored tables on the device
  // (cuda/channel_ops_kernel.h): channel c's stored output is
  // table[c * table_stride + its stored byte] (stride 0: one table; 256: one
  // per channel), 0 in the padding channels from table_channels on.
  const int8_t* table = nullptr;
  int32_t table_stride = 0, table_channels = 0;
};

// The output of channel `c` at NHWC offset `at` (row * out_c + c) from its accumulator.
OCTET_HOST_DEVICE int32_t requantize_output(int32_t acc, int c, int64_t at, const RequantEpilogue& e) {
  int32_t skip = 0;
  if (e.skip)
    skip = (e.skip_bits > 8 ? reinterpret_cast<const int16_t*>(e.skip)[at] : e.skip[at]) - e.skip_zero_point;
  const int32_t skip_multiplier = e.skip ? e.skip_multiplier[c] : 0;
  return ::octet::requantize(acc + e.bias[c], e.multiplier[c], skip, skip_multiplier, e.shift[c],
                             ::octet::lowest_output(e.relu, e.zero_point, e.bits), e.zero_point,
                             ::octet::highest_output(e.bits));
}

}  // namespace octet
