// The quantized model as a standard ONNX QDQ graph, for ONNX Runtime and
// TensorRT: every int8 tensor is a QuantizeLinear/DequantizeLinear pair
// (scale = 1 / octet's scale, zero point 0) around float Conv, Gemm, Add,
// Relu and pooling; weights are int8 initializers dequantized per output
// channel (axis 0), biases int32 at scale s_in * s_w. The graph takes the
// normalised float32 NCHW image ("input", batch dimension free) and returns
// float logits ("logits"): the int32 accumulators octet returns, dequantized.
// QDQ rounds in float (half to even) where octet requantizes in fixed point,
// so an exported model may differ from octet's int8 in a few bits. Nodes kept
// in float have float weights, and no QDQ pair between two of them.
#pragma once

#include <cstdint>
#include <string>

#include "qmodel/quantized_model.h"

namespace octet {

constexpr int kOnnxOpset = 13;

struct OnnxExportSummary {
  int opset = kOnnxOpset;
  int64_t nodes = 0;            // ONNX nodes in the graph
  int64_t quantize_linear = 0;  // QuantizeLinear nodes (int8 activations)
  int64_t dequantize_linear = 0;
  int64_t initializers = 0;
  int64_t bytes = 0;  // size of the file
};

// Builds the graph, passes it through the ONNX checker and strict shape
// inference, then writes it atomically; fails naming the node it cannot
// express and writes nothing.
OnnxExportSummary export_onnx(const QuantizedModel& model, const std::string& path);

// Whether the export has a kernel for `op` (interop/onnx_ops.cpp).
bool onnx_exports(Op op);

}  // namespace octet
