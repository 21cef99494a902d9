// An operator as one unit, in the manner of ggml's op files: everything octet
// knows of an operator is its definition, graph/ops/<name>.cpp: what it is
// (its traits), its shape rule, the parameters it owns, its float reference
// (which the float executor runs) and its int8 reference (the oracle every
// integer backend is held to). graph/ops/op_list.h lists the operators.
//
// Each backend keeps a table of its own kernels per operator, each with a
// can_implement check that says why it cannot run a node (in the manner of
// CUTLASS): the CPU runtime (runtime/cpu/kernels/), the CUDA runtime
// (runtime/cuda/op_kernels.cu), the LibTorch trainer (train/torch_ops.cpp)
// and the ONNX export (interop/onnx_ops.cpp). Adding an operator is its
// definition, its line in op_list.h, a kernel per backend that runs it and
// its cases in tests/ops/op_cases.cpp; a backend without a kernel for it says so.
#pragma once

#include <cstdint>
#include <vector>

#include "common/tensor.h"
#include "graph/graph.h"
#include "graph/node_quant.h"
#include "graph/op_traits.h"

namespace octet {

// A parameter a node owns in a training graph: "<node><suffix>".
struct ParamShape {
  const char* suffix;  // ".weight", ".bias", ".running_mean", ...
  Shape shape;
  bool trainable;
};

// A weighted node's float parameters as the float executor holds them.
struct FloatLayer {
  FloatTensor weight;  // [out][K], K in the order its NHWC input is read (graph/layout.h)
  std::vector<float> bias;
};

// What an operator's float reference reads and writes. Values are NHWC,
// [N][H][W][C] (a flat vector of F features is [N][F]).
struct FloatOpArgs {
  const Node& node;
  const float* image;  // the input node: N x C x H x W normalised floats
  std::vector<const FloatTensor*> inputs;
  std::vector<ActShape> in;  // the inputs' per-sample shapes
  ActShape out;
  const FloatLayer* layer;  // weighted operators: their parameters
  FloatTensor& y;           // [N][out.h][out.w][out.c]; every value is to be written
};

// The int8 references' activations: int8 values, or a wide activation's
// (NodeQuant::bits) int16 ones, in one type.
using ActTensor = Tensor<int16_t>;

// What an operator's int8 reference reads and writes: NCHW tensors, one
// output value at a time. It makes its output itself, sized by its own
// reading of the inputs' dimensions (not by the shape rule, which it checks).
struct Int8ReferenceArgs {
  const Node& node;
  std::vector<const ActTensor*> inputs;  // [N][C][H][W]; a flat vector is [N][F][1][1]
  const NodeQuant& q;
  int64_t batch;
  const float* image;  // the input node: batch x C x H x W normalised floats
  bool is_output;      // the last node: int32 accumulators into `logits`, no requantization
  ActTensor& y;        // [N][C][H][W]
  Int32Tensor& logits;  // logits_shape: [N][classes], or [N][H][W][classes] from an output conv
  std::vector<float> input_scales = {};  // the inputs' int8 scales (table-driven operators read them)
  std::vector<int32_t> input_zero_points = {};  // the inputs' zero points (graph/node_quant.h), one per input
};

struct OpDef {
  OpTraits traits;
  // The output's per-sample shape from the inputs' (in order, a fused
  // residual included); fails saying what is wrong (the caller names the node).
  ActShape (*shape)(const Node& n, const std::vector<ActShape>& in);
  // The parameters it owns in a training graph; null: none.
  std::vector<ParamShape> (*params)(const Node& n, const std::vector<ActShape>& in);
  // Multiply-adds per sample; null: none counted.
  double (*macs)(const Node& n, const std::vector<ActShape>& in, const ActShape& out);
  // Averaging operators: how many values an output sums, by which a
  // requantization multiplier divides, for each of its multipliers (one, or
  // an average pool's one per window count); null: one multiplier per input,
  // dividing by 1.
  std::vector<double> (*windows)(const Node& n, const std::vector<ActShape>& in);
  // Null for operators that inference graphs do not hold (batch norm).
  void (*run_float)(const FloatOpArgs& args);
  // Null for operators that quantized graphs do not hold.
  void (*run_int8_reference)(const Int8ReferenceArgs& args);
};

const OpDef& op_def(Op op);
// Every operator, in the order of the Op enum.
const std::vector<const OpDef*>& all_op_defs();

// The same from a node.
std::vector<ActShape> input_shapes(const Node& n, const std::vector<ActShape>& shapes);
double op_macs(const Node& n, const std::vector<ActShape>& shapes, int node);
// The requantization multipliers a non-weighted node owns (traits'
// input_multipliers), each output scale / (input `input`'s scale x `window`).
struct MultiplierTerm {
  size_t input;
  double window;
};
std::vector<MultiplierTerm> multiplier_terms(const Node& n, const std::vector<ActShape>& shapes);

}  // namespace octet
