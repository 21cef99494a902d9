#include "runtime/cuda/op_support.h"

namespace octet::cuda {

namespace {
struct OpSupport {
  Op op;
  std::string (*can_implement)(const Node& n);
};

std::string always(const Node&) { return ""; }
// Its conv kernels and the image fold read square kernels.
std::string square_kernel(const Node& n) {
  return rectangular_kernel(n) ? "the CUDA runtime's convolutions have square kernels, and this one is " +
                                     std::to_string(n.kernel) + "x" + std::to_string(kernel_width(n))
                               : "";
}

// The operators with a CUDA kernel (cuda_engine.cu launches them); any other is refused.
const OpSupport kSupported[] = {
    {Op::Input, always},     {Op::Conv2d, square_kernel},    {Op::Linear, always},        {Op::ReLU, always},
    {Op::MaxPool2d, always}, {Op::AvgPool2d, always}, {Op::GlobalAvgPool, always}, {Op::Add, always},
    {Op::Flatten, always},   {Op::ShortcutA, always}, {Op::Concat, always},        {Op::Mul, always},
    {Op::ChannelSlice, always}, {Op::ChannelShuffle, always}, {Op::Pad2d, always}, {Op::Activation, always},
};
}  // namespace

std::string why_node_unsupported(const Node& n) {
  for (const OpSupport& s : kSupported)
    if (s.op == n.op) return s.can_implement(n);
  return std::string("the CUDA runtime has no kernel for operator '") + op_name(n.op) + "'";
}

std::string why_graph_unsupported(const Graph& g) {
  for (const Node& n : g.nodes)
    if (const std::string why = why_node_unsupported(n); !why.empty())
      return why + ", at node '" + n.name + "' (" + op_name(n.op) + ")";
  return "";
}

std::string why_model_unsupported(const QuantizedModel& m) {
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    if (m.quant[i].in_float)
      return "the CUDA runtime runs int8 nodes only, and the model keeps node '" + m.graph.nodes[i].name + "' (" +
             op_name(m.graph.nodes[i].op) + ") in float; run it with the cpu backend";
    if (m.quant[i].zero_point != 0)  // its kernels pad with 0 and requantize without one: not yet checked on a GPU
      return "the CUDA runtime reads int8 activations with zero point 0 only, and node '" + m.graph.nodes[i].name +
             "' (" + op_name(m.graph.nodes[i].op) + ") has zero point " + std::to_string(m.quant[i].zero_point) +
             "; run it with the cpu backend, or quantize with --activations signed";
    if (m.quant[i].bits != 8)
      return "the CUDA runtime reads 8-bit activations only, and node '" + m.graph.nodes[i].name + "' (" +
             op_name(m.graph.nodes[i].op) + ") has " + std::to_string(m.quant[i].bits) +
             "-bit ones; run it with the cpu backend, or quantize with --wide-bits 8";
  }
  return why_graph_unsupported(m.graph);
}

}  // namespace octet::cuda
