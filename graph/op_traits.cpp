#include "graph/op_traits.h"

#include "common/error.h"

namespace octet {

namespace {
// clang-format off
const std::vector<OpTraits> kTraits = {
    //  op                 name               in  train  weight image  relu   resid  scale  mult
    {Op::Input,         "input",           0, false, false, false, false, false, true,  0},
    {Op::Conv2d,        "conv2d",          1, false, true,  true,  true,  true,  true,  0},
    {Op::BatchNorm2d,   "batch_norm2d",    1, true,  false, true,  false, false, false, 0},
    {Op::Linear,        "linear",          1, false, true,  false, true,  true,  true,  0},
    {Op::ReLU,          "relu",            1, false, false, false, false, false, false, 0},
    {Op::MaxPool2d,     "max_pool2d",      1, false, false, true,  false, false, false, 0},
    {Op::AvgPool2d,     "avg_pool2d",      1, false, false, true,  false, false, true,  1},
    {Op::GlobalAvgPool, "global_avg_pool", 1, false, false, true,  false, false, true,  1},
    {Op::Add,           "add",             2, false, false, false, true,  false, true,  2},
    {Op::Flatten,       "flatten",         1, false, false, false, false, false, false, 0},
    {Op::ShortcutA,     "shortcut_a",      1, false, false, true,  false, false, false, 0},
};
// clang-format on
}  // namespace

const std::vector<OpTraits>& all_op_traits() { return kTraits; }

const OpTraits& op_traits(Op op) {
  const auto index = static_cast<size_t>(op);
  check(index < kTraits.size() && kTraits[index].op == op, "op_traits: operator " + std::to_string(index) +
                                                               " has no entry in graph/op_traits.cpp");
  return kTraits[index];
}

}  // namespace octet
