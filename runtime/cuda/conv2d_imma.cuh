// Int8 convolution on tensor cores (mma.sync.m16n8k32, sm_80+; wgmma on sm_90a): an implicit
// GEMM over NHWC activations with channels padded to 16, a multistage
// cp.async pipeline, and the requantizing epilogue (bias, residual, ReLU,
// clamp, int8 store) in the same kernel. The index math is in implicit_gemm.h.
#pragma once

#include <string>
#include <vector>

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/programmatic_launch.cuh"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

// For the current device: allows each tile's kernel its shared memory and
// returns how many blocks of each tile fit on one multiprocessor (the
// `resident` argument of igemm::choose_tile); 0 for the wgmma tiles unless
// wgmma_offered.
std::vector<int> conv2d_imma_prepare();

// Whether the current device runs the wgmma tiles: compute capability 9.0,
// and the environment variable OCTET_WGMMA=1 (they are off by default until
// a GPU session has run them against the CPU runtime: docs/gpu.md). Fails on
// an OCTET_WGMMA other than 0 or 1.
bool wgmma_offered();

// The wgmma tiles' entry points (conv2d_wgmma.cu, sm_90a): the tile's
// resident blocks (after allowing it its shared memory), its attributes, and
// conv2d_imma for it.
int conv2d_wgmma_prepare(int tile);
cudaFuncAttributes conv2d_wgmma_attributes(int tile);
void conv2d_wgmma(const igemm::Problem& p, int tile, const int8_t* input, StoredInput input_kind,
                  const int8_t* weights, const RequantEpilogue& e, int8_t* output, KernelStream stream,
                  const igemm::SplitK& split);

// Registers, shared memory and local memory (spills, stack) of tile i's
// kernel on the current device, for reports.
std::string conv2d_imma_kernel_info(int tile);

// `weights`: [out_c][packed_depth] (device_layout.h pack_layer with
// tap_channels p.tap_c and depth multiple 32); `input` and `output` NHWC with
// in_stride and out_c channels, 16-byte aligned, stored as stored_value.h
// says (the input as `input_kind`; the output and the residual as e.bits and
// e.skip_bits say). Fails naming the reason when igemm::unsupported(p, tile) does.
// Where stream.programmatic, launched to start beside the kernel before it in the stream
// (programmatic_launch.cuh; the kernel waits for it before its first input load). `split`: K over split.slices blocks
// per output tile (igemm::SplitK; its arrivals 0 before the launch, and after it).
void conv2d_imma(const igemm::Problem& p, int tile, const int8_t* input, StoredInput input_kind, const int8_t* weights,
                 const RequantEpilogue& e, int8_t* output, KernelStream stream, const igemm::SplitK& split);

}  // namespace octet::cuda
