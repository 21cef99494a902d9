// What each operator is, as every stage reads it: the graph (names, arity),
// batch-norm folding and ReLU fusion, the quantizer (which tensors get a scale
// of their own, which ops take a fused residual), the quantized-model format
// (which parameters a node owns), the runtimes' layouts and the reports. Each
// operator's traits are part of its definition (graph/op.h, graph/ops/).
#pragma once

#include "graph/graph.h"

namespace octet {

// OpTraits::inputs of an operator that reads any number of values (concat).
constexpr int kAnyInputs = -1;

struct OpTraits {
  Op op;
  const char* name;    // in graph JSON, reports and messages
  int inputs;          // values it reads (not counting a fused residual); kAnyInputs: one or more
  bool training_only;  // exists only in training graphs: folded away before inference (batch norm)
  bool weighted;       // owns a weight [out][in...] and a bias: int8 weights, int32 bias in quantized models
  bool reads_image;    // reads its input as H x W x C (not as one flat vector)
  bool absorbs_relu;   // a ReLU that reads only its output is fused into it
  // Adds a residual (its optional second input) in its epilogue, so that an
  // add of its output is fused into it and its output is never rounded alone.
  bool absorbs_residual;
  // Its int8 output has a scale of its own (a quantization point); the others
  // keep their input's scale and values.
  bool owns_scale;
  // Requantization multipliers it owns besides a weighted op's per-channel
  // ones: one per input whose int8 values it rescales (add: 2, pools: 1).
  int input_multipliers;
  // Its output is its input's int8 values moved, none computed (flatten,
  // shortcut): exact in int8, and exact in an exported QDQ graph without a
  // QuantizeLinear of its own.
  bool moves_values;
  // Its int8 output is its inputs' product requantized (mul): one
  // multiplier, s_out / (s_in0 x s_in1), in place of one per input.
  bool multiplies_inputs = false;
};

const OpTraits& op_traits(Op op);  // op_def(op).traits

}  // namespace octet
