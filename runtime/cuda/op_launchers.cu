#include "runtime/cuda/op_launchers.cuh"

#include "runtime/cuda/channel_ops.cuh"
#include "runtime/cuda/eltwise.cuh"
#include "runtime/cuda/pool.cuh"
#include "runtime/cuda/quantize_input.cuh"
#include "runtime/cuda/shortcut_a.cuh"

namespace octet::cuda {

namespace {
struct OpEntry {
  Op op;
  OpLauncher launch;
};

const OpEntry kLaunchers[] = {
    {Op::Input,
     [](const NodeLaunch& l) {
       // The first kernel (of a graph too): launched plainly, no kernel before it to overlap.
       if (l.fold.kind != ImageFold::kNone)
         return quantize_folded_input(l.image, l.batch, l.fold, l.q.scale, l.y, l.stream.stream);
       quantize_input(l.image, l.batch, l.out.c, l.out.h, l.out.w, l.out_c, l.q.scale, l.y, l.stream.stream);
     }},
    {Op::MaxPool2d,
     [](const NodeLaunch& l) {
       max_pool(l.x(), l.batch, l.in(), l.in_c(), l.out, l.n, l.q.zero_point, l.y, l.stream);
     }},
    {Op::AvgPool2d,
     [](const NodeLaunch& l) {
       avg_pool(l.x(), l.batch, l.in(), l.in_c(), l.out, l.n, l.q.multiplier, l.q.shift.data[0], l.in_zero_point(),
                l.q.zero_point, l.y, l.stream);
     }},
    {Op::GlobalAvgPool,
     [](const NodeLaunch& l) {
       global_avg_pool(l.x(), l.batch, l.in().h, l.in().w, l.in_c(), l.q.multiplier.data[0], l.q.shift.data[0],
                       l.in_zero_point(), l.q.zero_point, l.y, l.stream);
     }},
    {Op::Add,
     [](const NodeLaunch& l) {
       add(l.x(), l.x2(), l.batch * l.out_bytes, l.q.multiplier.data[0], l.q.multiplier.data[1], l.q.shift.data[0],
           l.n.relu, {l.in_zero_points[0], l.in_zero_points[1], l.q.zero_point}, l.y, l.stream);
     }},
    {Op::ShortcutA,
     [](const NodeLaunch& l) {
       shortcut_a(l.x(), l.batch, l.in().h, l.in().w, l.in().c, l.in_c(), l.n.channels, l.out_c, l.y, l.stream);
     }},
    {Op::ReLU, [](const NodeLaunch& l) { relu(l.x(), l.batch * l.out_bytes, l.in_zero_point(), l.y, l.stream); }},
    {Op::Concat,
     [](const NodeLaunch& l) {
       const int64_t pixels = l.batch * l.out.h * l.out.w;
       int first = 0;
       for (size_t i = 0; i < l.inputs.size(); ++i) {
         concat_input(l.inputs[i], pixels, l.inputs_c[i], l.in_shapes[i].c, first, l.out_c, l.q.multiplier.data[i],
                      l.q.shift.data[0], l.in_zero_points[i], l.q.zero_point, l.y, l.stream);
         first += l.in_shapes[i].c;
       }
       if (first < l.out_c) zero_channels(l.y, pixels, first, l.out_c, l.stream);
     }},
    {Op::Mul,
     [](const NodeLaunch& l) {
       mul(l.x(), l.x2(), ops::mul_gate(l.in_shapes[0], l.in_shapes[1]), l.batch, int64_t(l.out.h) * l.out.w, l.out_c,
           l.inputs_c[1], l.q.multiplier.data[0], l.q.shift.data[0],
           {l.in_zero_points[0], l.in_zero_points[1], l.q.zero_point}, l.y, l.stream);
     }},
    {Op::ChannelMean,
     [](const NodeLaunch& l) {
       channel_reduce(l.x(), l.batch * l.out.h * l.out.w,
                      {l.in().c, l.in_c(), l.out_c, stored_unsigned(l.in_zero_point()), false, l.q.multiplier.data[0],
                       l.q.shift.data[0], stored_range(false, l.q.zero_point)},
                      l.y, l.stream);
     }},
    {Op::ChannelMax,
     [](const NodeLaunch& l) {
       channel_reduce(l.x(), l.batch * l.out.h * l.out.w,
                      {l.in().c, l.in_c(), l.out_c, stored_unsigned(l.in_zero_point()), true, 0, 0, {}}, l.y,
                      l.stream);
     }},
    {Op::ChannelSlice,
     [](const NodeLaunch& l) {
       channel_slice(l.x(), l.batch * l.out.h * l.out.w, l.in_c(), l.n.offset, l.n.channels, l.out_c, l.y, l.stream);
     }},
    {Op::ChannelShuffle,
     [](const NodeLaunch& l) {
       channel_shuffle(l.x(), l.batch * l.out.h * l.out.w, l.in().c, l.n.groups, l.out_c, l.y, l.stream);
     }},
    {Op::Activation,
     [](const NodeLaunch& l) {
       activation(l.x(), l.table, l.batch * l.out.h * l.out.w, l.out.c, l.out_c, l.y, l.stream);
     }},
    {Op::PRelu,
     [](const NodeLaunch& l) {
       channel_tables(l.x(), l.table, l.batch * l.out.h * l.out.w, l.out.c, l.out_c, l.y, l.stream);
     }},
    {Op::Pad2d,
     [](const NodeLaunch& l) {
       pad2d(l.x(), l.batch, PadShape{l.in().h, l.in().w, l.out.h, l.out.w, l.out_c, l.n.pad_top, l.n.pad_left}, l.y,
             l.stream);
     }},
    {Op::Upsample,
     [](const NodeLaunch& l) {
       upsample(l.x(), l.batch, UpsampleShape{l.in().h, l.in().w, l.n.stride, upsample_across(l.n), l.out_c}, l.y,
                l.stream);
     }},
    {Op::LocalResponseNorm,
     [](const NodeLaunch& l) {
       local_response_norm(l.x(), l.batch * l.out.h * l.out.w,
                           {l.out.c, l.out_c, l.n.kernel, stored_unsigned(l.in_zero_point()), l.q.zero_point},
                           l.multipliers, l.y, l.stream);
     }},
    {Op::LayerNorm,
     [](const NodeLaunch& l) {
       layer_norm(l.x(), l.batch * l.out.h * l.out.w,
                  {l.out.c, l.out_c, stored_unsigned(l.in_zero_point()), l.q.zero_point, l.n.epsilon, l.in_scales[0],
                   l.q.scale},
                  l.y, l.stream);
     }},
    {Op::GroupNorm,
     [](const NodeLaunch& l) {
       group_norm(l.x(), l.batch, l.n.groups,
                  {l.out.c, l.out_c, l.out.c / l.n.groups, int64_t{l.out.h} * l.out.w,
                   stored_unsigned(l.in_zero_point()), l.q.zero_point, lowest_output(l.n.relu, l.q.zero_point),
                   l.n.epsilon, l.in_scales[0], l.q.scale, l.multipliers},
                  l.y, l.stream);
     }},
    {Op::Flatten, [](const NodeLaunch&) {}},  // its value is its input's bytes
};

}  // namespace

OpLauncher launcher(Op op) {
  for (const OpEntry& e : kLaunchers)
    if (e.op == op) return e.launch;
  return nullptr;
}

}  // namespace octet::cuda
