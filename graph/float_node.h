// A node computed in float: its operator's float reference followed by its
// fused residual and ReLU. The float executor runs every node so; a quantized
// model runs so the nodes it keeps in float (mixed precision), between a
// dequantize of their int8 inputs and a quantize of their output. Every int8
// backend and the test oracle call run_dequantized, so they agree bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/op.h"

namespace octet {

// def.run_float, then the skip input of a conv or linear with a fused
// residual added, then the ReLU (or Clip(0, relu_max)).
void run_float_fused(const FloatOpArgs& args);

// The parameters of a node kept in float in the layout the float reference
// reads: a weighted one's NodeQuant::float_weight and float_bias, a PRelu's
// slopes; none for the others.
FloatLayer float_layer(const Graph& g, const std::vector<ActShape>& shapes, int node, const NodeQuant& q);

// Node `node` of a quantized graph, kept in float: its inputs (NHWC int8 at
// `input_scales`, less `input_zero_points`) dequantized, run_float_fused, its
// output quantized at q.scale and q.zero_point by quantize_input (round half
// to even, saturating). Inside a float
// segment (QuantizedModel::float_outputs) values pass as floats instead.
struct DequantizedRun {
  const Graph& graph;
  const std::vector<ActShape>& shapes;  // every node's per-sample shape
  int node;
  const NodeQuant& q;
  const FloatLayer* layer;  // weighted nodes: float_layer's result
  int64_t batch;
  std::vector<const int8_t*> inputs;  // NHWC int8; null where float_inputs has the value
  std::vector<float> input_scales;
  std::vector<const float*> float_inputs;  // per input, an NHWC float value, or null (then int8)
  int8_t* y;                               // NHWC int8 output, or null when float_y takes it
  float* float_y = nullptr;                // NHWC float output (read only by float nodes)
  std::vector<int32_t> input_zero_points = {};  // per input, beside input_scales
};
void run_dequantized(const DequantizedRun& run);

}  // namespace octet
