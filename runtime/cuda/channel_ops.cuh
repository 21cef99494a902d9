// Launchers of channel_ops_kernel.h's operators (its header says how each divides the work).
#pragma once

#include "runtime/cuda/channel_ops_kernel.h"
#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// Input i of a concat: its `channels` real channels into output channels
// [first, first + channels), requantized; `pixels`: batch x height x width.
void concat_input(const int8_t* x, int64_t pixels, int in_stored_c, int channels, int first, int out_stored_c,
                  int32_t multiplier, int32_t shift, int32_t in_zero_point, int32_t out_zero_point, int8_t* y,
                  KernelStream stream);
// Output channels [from, stored_c) of every pixel set to 0.
void zero_channels(int8_t* y, int64_t pixels, int from, int stored_c, KernelStream stream);
// `z_stored_c`: z's stored channels (a per-pixel gate's, of its one channel).
void mul(const int8_t* x, const int8_t* z, ops::MulGate gate, int64_t batch, int64_t pixels, int stored_c,
         int z_stored_c, int32_t multiplier, int32_t shift, BinaryZeroPoints zero_points, int8_t* y,
         KernelStream stream);
// ChannelMean or ChannelMax (o.max) of `pixels` pixels.
void channel_reduce(const int8_t* x, int64_t pixels, const ChannelReduceOperands& o, int8_t* y, KernelStream stream);
void channel_slice(const int8_t* x, int64_t pixels, int in_stored_c, int offset, int channels, int out_stored_c,
                   int8_t* y, KernelStream stream);
void channel_shuffle(const int8_t* x, int64_t pixels, int channels, int groups, int stored_c, int8_t* y,
                     KernelStream stream);
// `table`: 256 bytes on the device (channel_ops_kernel.h stored_activation_table).
void activation(const int8_t* x, const int8_t* table, int64_t pixels, int channels, int stored_c, int8_t* y,
                KernelStream stream);
// `tables`: 256 bytes per channel on the device (channel_ops_kernel.h stored_channel_tables).
void channel_tables(const int8_t* x, const int8_t* tables, int64_t pixels, int channels, int stored_c, int8_t* y,
                    KernelStream stream);
void pad2d(const int8_t* x, int64_t batch, const PadShape& s, int8_t* y, KernelStream stream);
void upsample(const int8_t* x, int64_t batch, const UpsampleShape& s, int8_t* y, KernelStream stream);
void layer_norm(const int8_t* x, int64_t pixels, const LayerNormOperands& o, int8_t* y, KernelStream stream);
// Of `batch` samples in `groups` groups; o.affine: on the device, device_layout.h group_norm_affine's.
void group_norm(const int8_t* x, int64_t batch, int groups, const GroupNormOperands& o, int8_t* y,
                KernelStream stream);
// `multipliers`: on the device, ops::local_response_multipliers of the node.
void local_response_norm(const int8_t* x, int64_t pixels, const LocalResponseOperands& o, const double* multipliers,
                         int8_t* y, KernelStream stream);

}  // namespace octet::cuda
