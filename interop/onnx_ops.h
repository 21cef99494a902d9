// The ONNX export's kernel for each operator (graph/op.h), in one table
// (onnx_ops.cpp): the ONNX nodes that compute a quantized node's float
// result from the dequantized values of its inputs. The export refuses a
// model holding an operator that has no entry, naming the node.
#pragma once

#include <string>
#include <vector>

#include "interop/qdq_writer.h"
#include "qmodel/quantized_model.h"

namespace octet {

struct OnnxNodeContext {
  QdqGraphWriter& w;
  OnnxTarget target;
  const Node& n;
  const NodeQuant& q;
  ActivationType type;  // how its own int8 output is stored
  std::string output_name;  // the graph output it writes (a model's logits), "" where none
  // The float values of its inputs (dequantized int8); for a value-moving op
  // of the onnxruntime target, their stored integers.
  std::vector<std::string> inputs;
  float input_scale;                // its first input's int8 scale (octet's)
  ActivationType input_type;        // how its first input is stored
  bool input_flat;                  // its first input is N x F rather than NCHW
  ActShape in;                      // its first input's per-sample shape
  std::string fill;                 // moving stored integers: their zero point, for the padding
};

struct OnnxOp {
  Op op;
  // Writes the node's ONNX nodes; returns the name of its float result.
  std::string (*emit)(const OnnxNodeContext& c);
  // Its result is already the int8 value, quantized by emit itself (the
  // input): no ReLU or QuantizeLinear follows it. (Nor do they follow an
  // operator that moves values, graph/op_traits.h moves_values.)
  bool quantizes;
  bool flat;  // its result is N x F
};

// The entry of `op`, or null when the export has none.
const OnnxOp* onnx_op(Op op);

}  // namespace octet
