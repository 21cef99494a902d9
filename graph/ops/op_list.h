// Every operator of octet's graph, once: the Op enum (graph/graph.h) and the
// table of definitions (graph/op.cpp) are both made from this list. Each
// operator's definition is graph/ops/<name>.cpp; the backends keep their
// kernels for it in tables of their own (see graph/op.h).
#pragma once

// X(enumerator, definition): the definition is ops::<name>, defined in graph/ops/<name>.cpp.
#define OCTET_OPS(X)                        \
  X(Input, input)                           \
  X(Conv2d, conv2d)                         \
  X(BatchNorm2d, batch_norm2d)              \
  X(Linear, linear)                         \
  X(ReLU, relu)                             \
  X(MaxPool2d, max_pool2d)                  \
  X(AvgPool2d, avg_pool2d)                  \
  X(GlobalAvgPool, global_avg_pool)         \
  X(Add, add)                               \
  X(Flatten, flatten)                       \
  X(ShortcutA, shortcut_a)                  \
  X(ChannelShuffle, channel_shuffle)        \
  X(Activation, activation)                 \
  X(Mul, mul)                               \
  X(Concat, concat)                         \
  X(ChannelSlice, channel_slice)            \
  X(Pad2d, pad2d)                           \
  X(LayerNorm, layer_norm)                  \
  X(PRelu, prelu)                           \
  X(LocalResponseNorm, local_response_norm) \
  X(GroupNorm, group_norm)                  \
  X(ChannelMean, channel_mean)              \
  X(ChannelMax, channel_max)                \
  X(Upsample, upsample)                     \
  X(UpsampleBilinear, upsample_bilinear)    \
  X(DepthToSpace, depth_to_space)
