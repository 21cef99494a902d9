// Flatten on the CPU: the same NHWC bytes, read as one vector (the next
// linear's weights are permuted to match, graph/layout.h).
#include <cstring>

#include "runtime/cpu/kernel.h"

namespace octet::cpu {

namespace {
void run(const KernelArgs& a) {
  std::memcpy(a.y, a.inputs[0], static_cast<size_t>(a.batch * a.node.output().numel()));
}
}  // namespace

extern const Kernel flatten_kernel = {Op::Flatten, "flatten", KernelPath::Reference, runs_every_node, nullptr, run};

}  // namespace octet::cpu
