#include "runtime/cuda/op_support.h"

#include "common/error.h"
#include "graph/op_traits.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/pool_kernel.h"
#include "runtime/engine.h"

namespace octet::cuda {

namespace {
struct OpSupport {
  Op op;
  std::string (*can_implement)(const Node& n);
};

std::string always(const Node&) { return ""; }

std::string by_factors(const Node& n) {
  return n.height ? "an upsampling to a size, no whole factor (the CUDA kernel repeats pixels)" : "";
}

// The operators with a CUDA kernel (cuda_engine.cu launches them); any other is refused.
const OpSupport kSupported[] = {
    {Op::Input, always},     {Op::Conv2d, always},    {Op::Linear, always},        {Op::ReLU, always},
    {Op::MaxPool2d, always}, {Op::AvgPool2d, always}, {Op::GlobalAvgPool, always}, {Op::Add, always},
    {Op::Flatten, always},   {Op::ShortcutA, always}, {Op::Concat, always},        {Op::Mul, always},
    {Op::ChannelSlice, always}, {Op::ChannelShuffle, always}, {Op::Pad2d, always}, {Op::Activation, always},
    {Op::LayerNorm, always}, {Op::PRelu, always}, {Op::LocalResponseNorm, always}, {Op::GroupNorm, always},
    {Op::ChannelMean, always}, {Op::ChannelMax, always}, {Op::Upsample, by_factors},
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

namespace {
// Why the CUDA runtime cannot run `m`; `wide_allowed`: on cuda-imma, whose
// implicit GEMM reads and writes wide values (stored_value.h).
std::string why_unsupported(const QuantizedModel& m, bool wide_allowed) {
  if (m.graph.output_count > 1)
    return "the CUDA runtime returns one output, and the model has " + std::to_string(m.graph.output_count) +
           " (its last nodes, from '" + m.graph.nodes[m.graph.first_output()].name +
           "'); run it with the cpu backend";
  if (m.graph.nodes.back().op != Op::Linear)
    return "the CUDA runtime returns a vector of logits per image, and the model returns an image of them (its "
           "output node '" + m.graph.nodes.back().name + "' is a conv); run it with the cpu backend";
  const std::vector<std::vector<int>> consumers = m.graph.consumers();
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const std::string node = "node '" + n.name + "' (" + op_name(n.op) + ")";
    if (m.quant[i].in_float)
      return "the CUDA runtime runs int8 nodes only, and the model keeps " + node + " in float; run it with the cpu "
             "backend";
    if (n.op == Op::AvgPool2d && m.quant[i].multiplier.numel() > kMostPoolMultipliers)
      return "the CUDA runtime's average pools whose windows count different numbers of values (ceil_mode's last "
             "window, padding not counted) take up to 64 values a window, and " + node + " has " +
             std::to_string(n.kernel) + "x" + std::to_string(kernel_width(n)) + "; run it with the cpu backend";
    if (m.quant[i].zero_point != 0 && m.quant[i].zero_point != -128)  // stored_value.h: int8 or uint8 bytes
      return "the CUDA runtime reads activations with zero point 0 (int8) or -128 (uint8) only, and " + node +
             " has zero point " + std::to_string(m.quant[i].zero_point) + "; run it with the cpu backend";
    if (m.quant[i].bits == 8) continue;
    const std::string wide = node + " has " + std::to_string(m.quant[i].bits) + "-bit activations";
    if (!wide_allowed)
      return "cuda-dp4a and cuda-cublaslt read 8-bit activations only, and " + wide +
             "; run it on cuda-imma or the cpu backend, or quantize with --wide-bits 8";
    // QuantizedModel::validate: dense convs make and read them; the implicit GEMM runs those but dilated ones.
    std::vector<int> convs = consumers[i];
    convs.push_back(static_cast<int>(i));
    for (const int c : convs)
      if (runs_grouped_kernel(m.graph.nodes[c]))
        return "cuda-imma's dilated convs (and those of non-square kernels) read and write 8-bit activations only, "
               "and " + wide + " that node '" + m.graph.nodes[c].name + "' (" +
               (m.graph.nodes[c].dilation != 1 ? "a dilated conv" : "a conv of a non-square kernel") +
               ") makes or reads; run it with the cpu backend, or quantize "
               "with --wide-bits 8";
  }
  return why_graph_unsupported(m.graph);
}
}  // namespace

std::string why_model_unsupported(const QuantizedModel& m) { return why_unsupported(m, false); }
std::string why_model_unsupported_on_imma(const QuantizedModel& m) { return why_unsupported(m, true); }

std::string why_cublaslt_cannot_run(const QuantizedModel& m, int node) {
  const Node& n = m.graph.nodes[node];
  if (!op_traits(n.op).weighted || runs_grouped_kernel(n) || m.quant[n.inputs[0]].zero_point == 0) return "";
  return "cuBLASLt multiplies signed int8 only, and node '" + n.name + "' (" + op_name(n.op) +
         ") reads a tensor with zero point -128 (unsigned); run it on cuda-imma or cuda-dp4a, or quantize with "
         "--activations signed";
}

std::string why_model_unsupported_on_cublaslt(const QuantizedModel& m) {
  if (std::string why = why_model_unsupported(m); !why.empty()) return why;
  for (int i = 0; i < static_cast<int>(m.graph.nodes.size()); ++i)
    if (std::string why = why_cublaslt_cannot_run(m, i); !why.empty()) return why;
  return "";
}

std::string why_model_unsupported_on(const std::string& backend, const QuantizedModel& m) {
  if (backend == backend_names::kCudaImma) return why_model_unsupported_on_imma(m);
  if (backend == backend_names::kCudaDp4a) return why_model_unsupported(m);
  if (backend == backend_names::kCudaCublasLt) return why_model_unsupported_on_cublaslt(m);
  fail("why_model_unsupported_on: no CUDA backend is named '" + backend + "'");
}

}  // namespace octet::cuda
