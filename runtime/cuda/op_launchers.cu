#include "runtime/cuda/op_launchers.cuh"

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
       quantize_input(l.image, l.batch, l.out.c, l.out.h, l.out.w, l.out_c, l.q.scale, l.y, l.stream);
     }},
    {Op::MaxPool2d,
     [](const NodeLaunch& l) {
       max_pool(l.x, l.batch, l.in, l.in_c, l.out, l.n.kernel, l.n.stride, l.n.padding, l.y, l.stream);
     }},
    {Op::AvgPool2d,
     [](const NodeLaunch& l) {
       avg_pool(l.x, l.batch, l.in, l.in_c, l.out, l.n.kernel, l.n.stride, l.n.padding, l.q.multiplier.data[0],
                l.q.shift.data[0], l.y, l.stream);
     }},
    {Op::GlobalAvgPool,
     [](const NodeLaunch& l) {
       global_avg_pool(l.x, l.batch, l.in.h, l.in.w, l.in_c, l.q.multiplier.data[0], l.q.shift.data[0], l.y,
                             l.stream);
     }},
    {Op::Add,
     [](const NodeLaunch& l) {
       add(l.x, l.x2, l.batch * l.out_bytes, l.q.multiplier.data[0], l.q.multiplier.data[1], l.q.shift.data[0],
                 l.n.relu, l.y, l.stream);
     }},
    {Op::ShortcutA,
     [](const NodeLaunch& l) {
       shortcut_a(l.x, l.batch, l.in.h, l.in.w, l.in.c, l.in_c, l.n.channels, l.out_c, l.y, l.stream);
     }},
    {Op::ReLU, [](const NodeLaunch& l) { relu(l.x, l.batch * l.out_bytes, l.y, l.stream); }},
    {Op::Flatten, [](const NodeLaunch&) {}},  // its value is its input's bytes
};

}  // namespace

OpLauncher launcher(Op op) {
  for (const OpEntry& e : kLaunchers)
    if (e.op == op) return e.launch;
  return nullptr;
}

}  // namespace octet::cuda
