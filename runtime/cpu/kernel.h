// The CPU runtime's kernels as one table (kernel_table.cpp), in the manner
// of CUTLASS's can_implement: each entry runs one operator (graph/op.h), says
// why it cannot run a node, prepares what it needs once (packed weights),
// binds what it needs from the node's scales once per engine (its epilogue's
// operands) and runs a batch. Each operator's kernels are one file of runtime/cpu/ops/.
//
// The engine (engine.h) keeps, per node, the kernels that can run it, in
// table order, and at each run takes the first that belongs to the kernel
// path in use (kernels.h kernel_path()), else (on the AVX-512 VNNI path) the
// first AVX2 one, else the portable one: a Reference kernel is portable C++
// and runs on every path; an Avx2 or Avx512Vnni one only where the CPU has it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "qmodel/quantized_model.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu {

// A node of a quantized model, as a kernel sees it.
struct NodeView {
  const QuantizedModel& model;
  const std::vector<ActShape>& shapes;  // every node's per-sample output shape
  int index;

  const Node& node() const { return model.graph.nodes[index]; }
  const NodeQuant& quant() const { return model.quant[index]; }
  ActShape input(size_t k = 0) const { return shapes[node().inputs.at(k)]; }
  // Input k's stored value of a real 0 (graph/node_quant.h).
  int32_t input_zero_point(size_t k = 0) const { return model.quant[node().inputs.at(k)].zero_point; }
  ActShape output() const { return shapes[index]; }
  // One of the model's outputs (its last nodes): its int32 accumulators are logits.
  bool is_output() const { return model.graph.is_output(index); }
};

// What a kernel prepares once for a node (each kernel its own type).
struct KernelData {
  virtual ~KernelData() = default;
};

struct KernelArgs {
  const NodeView& node;
  int64_t batch;
  std::vector<const int8_t*> inputs;  // NHWC int8 values of the node's inputs
  const float* image;                 // the input node: batch x C x H x W normalised floats
  int8_t* y;                          // NHWC int8 output (null for the output node)
  int32_t* logits;                    // the output node: [batch][classes]
  const KernelData* data;             // what the kernel's prepare made (null without one)
  const KernelData* bound;            // what its bind made (null without one)
};

struct Kernel {
  Op op;
  const char* name;  // "conv2d-avx512-vnni", ...
  KernelPath path;   // Reference: portable, every path; Avx2, Avx512Vnni: only on that path
  // "" when it can run the node, else why not.
  std::string (*can_implement)(const NodeView& node);
  // Null: nothing to prepare. Kernels with the same prepare share what it makes.
  // It may read the node's weights only: an engine for the same weights at
  // other activation scales shares what it made (CpuEngine(model, packed)).
  // tests/runtime/test_engine_partial.cpp checks that on every kind of conv.
  std::unique_ptr<KernelData> (*prepare)(const NodeView& node);
  void (*run)(const KernelArgs& args);
  // Null: nothing to bind. What a run needs from the node's scales and zero
  // points (its epilogue's padded tables and vectors), made once per engine
  // from `prepared` (prepare's, or null), so that no run makes them: unlike
  // prepare's, never shared with an engine at other scales.
  std::unique_ptr<KernelData> (*bind)(const NodeView& node, const KernelData* prepared) = nullptr;
};

// A conv or linear node's geometry for a batch (a linear layer: a 1x1
// convolution over a 1x1 image of all its input values).
inline ConvGeometry conv_geometry(const NodeView& v, int64_t batch) {
  const Node& n = v.node();
  const ActShape in = v.input(), out = v.output();
  ConvGeometry g;
  g.batch = batch;
  g.out_c = out.c;
  if (n.op == Op::Conv2d) {
    g.in_h = in.h, g.in_w = in.w, g.in_c = in.c;
    g.out_h = out.h, g.out_w = out.w;
    g.kernel = n.kernel, g.kernel_w = kernel_width(n), g.stride = n.stride, g.padding = n.padding;
    g.dilation = n.dilation;
  } else {
    g.in_c = static_cast<int>(in.numel());
  }
  g.input_zero_point = v.input_zero_point();
  g.input_bits = v.model.quant[n.inputs[0]].bits;
  return g;
}

// A conv with one output channel per input channel (groups == channels).
inline bool is_depthwise(const NodeView& v) { return octet::is_depthwise(v.node(), v.input().c); }

// A weighted node's requantizing epilogue: its parameters, its fused
// residual's (the second input; its values: those of a run) and its ReLU.
inline RequantEpilogue requant_epilogue(const NodeView& v) {
  const NodeQuant& q = v.quant();
  RequantEpilogue e;
  e.bias = q.bias.ptr();
  e.multiplier = q.multiplier.ptr();
  e.shift = q.shift.ptr();
  e.relu = v.node().relu;
  e.zero_point = q.zero_point;
  e.bits = q.bits;
  if (v.node().inputs.size() == 2) {
    e.skip_multiplier = q.skip_multiplier.ptr();
    e.skip_zero_point = v.input_zero_point(1);
    e.skip_bits = v.model.quant[v.node().inputs[1]].bits;
  }
  return e;
}
inline RequantEpilogue requant_epilogue(const KernelArgs& a) {
  RequantEpilogue e = requant_epilogue(a.node);
  if (a.inputs.size() == 2) e.skip = a.inputs[1];
  return e;
}

// A kernel's bound epilogue (Kernel::bind): its tables; the run's residual
// values go into a copy (EpilogueTables::skip).
struct BoundEpilogue : KernelData {
  explicit BoundEpilogue(std::unique_ptr<const PaddedEpilogue> made) : epilogue(std::move(made)) {}
  std::unique_ptr<const PaddedEpilogue> epilogue;
  EpilogueTables tables(const KernelArgs& a) const {
    EpilogueTables t = epilogue->tables;
    t.skip = a.inputs.size() == 2 ? a.inputs[1] : nullptr;
    return t;
  }
};

// can_implement of a kernel that runs every node of its operator: anywhere,
// where the CPU has the AVX2 or AVX-512 VNNI path's instructions, or AVX-512
// VBMI (lookup_simd.h's byte lookups).
inline std::string runs_every_node(const NodeView&) { return ""; }
// "" where this CPU has `path`'s instructions, else why not (every SIMD kernel's first test).
inline std::string path_unsupported(KernelPath path) {
  return kernel_path_supported(path) ? "" : std::string("this CPU lacks ") + kernel_path_name(path);
}
inline std::string runs_every_node_on_avx2(const NodeView&) { return path_unsupported(KernelPath::Avx2); }
inline std::string runs_every_node_on_vnni(const NodeView&) { return path_unsupported(KernelPath::Avx512Vnni); }
inline std::string runs_every_node_with_vbmi(const NodeView&) {
  return cpu_has_avx512_vbmi() ? "" : "this CPU lacks AVX-512 VBMI (byte permutes)";
}

// Every kernel of the CPU runtime; the fastest of an operator's first.
const std::vector<Kernel>& kernel_table();

// The kernel of every node a model keeps in float, whatever its operator
// (ops/float_node.cpp): its inputs dequantized, its float reference, its
// output quantized. The int8 kernels of the table never run such a node.
extern const Kernel float_node_kernel;

}  // namespace octet::cpu
