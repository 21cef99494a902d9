// The AVX-512 depthwise convolution (depthwise_vnni.cpp): one output channel
// per input channel. That file is compiled with AVX-512 flags, so call it only
// when kernel_path_supported(KernelPath::Avx512Vnni).
#pragma once

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu::vnni {

// `taps` is [kernel * kernel][channels rounded up to kEpilogueBlock], int32,
// zero in the padding lanes; `e` is the layer's epilogue (its bias as the
// model's: the activations are read as they are). g.in_c == g.out_c.
void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output);

}  // namespace octet::cpu::vnni
