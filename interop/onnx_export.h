// The quantized model as a standard ONNX QDQ graph, for ONNX Runtime and
// TensorRT (which takes zero point 0 only: a model quantized with signed,
// 8-bit activations): every int8 tensor is a QuantizeLinear/DequantizeLinear pair
// around float Conv, Gemm, Add, Relu and pooling; weights are int8
// initializers dequantized per output channel (axis 0), biases int32 at scale
// s_in * s_w. The graph takes the normalised float32 NCHW image ("input",
// batch dimension free) and returns float logits ("logits"; a model of several
// outputs: "logits_0", "logits_1", ... in order): the int32 accumulators octet
// returns, dequantized. QDQ rounds in float (half to even)
// where octet requantizes in fixed point, so an exported model may differ
// from octet's int8 in a few bits.
//
// Two targets:
//  - faithful (the default): octet's tensors as they are, int8 with zero
//    point 0 (-128 for a tensor octet stores unsigned) and scale 1 / octet's
//    scale, a residual added to a conv's float
//    result before its one rounding, as octet's requantization does. ONNX
//    Runtime runs it correctly but keeps every Conv in float: its QDQ fusion
//    does not absorb a Relu before an int8 zero point of 0, nor an Add
//    between a Conv and its QuantizeLinear, so a conv (or hidden linear)
//    with neither has its bias added after it (a QLinearConv's AVX2 kernel
//    saturates u8 x s8 pair sums).
//  - onnxruntime: the pattern ONNX Runtime fuses into QLinearConv,
//    QLinearAdd, QLinearGlobalAveragePool and QGemm (its u8 x s8 kernels),
//    at the price of roundings octet does not make: activations are uint8
//    (ORT fuses int8 ones only on ARM), a ReLU's output with zero point 0 (so
//    ORT drops the Relu; a tensor octet stores unsigned is then exact, and a
//    signed one holds up to 255 steps where octet saturates at 127); a
//    signed tensor that a conv or linear reads at 7 bits (zero point 64,
//    twice octet's step, its bias re-rounded to match), since ORT's
//    AVX2 kernels sum u8 x s8 products in pairs into int16 and saturate on
//    uint8 values above 127; any other signed tensor with zero point 128
//    (octet's 256 values); a conv with a fused residual rounded to its node's
//    scale before the Add (octet rounds once, after it). Operators that only
//    move values move the stored uint8 integers, then dequantize them.
// Nodes kept in float (mixed precision) have float weights, and no QDQ pair
// between two of them; only the faithful target exports such a model. A wide
// activation (NodeQuant::bits, int16) is rounded in float by the faithful
// target: Mul, Round, Clip to its bits' range, Div (QuantizeLinear to int16
// needs opset 21), and ORT runs the convs that read or make it in float; the
// onnxruntime target writes it at 8 bits over the same amax, as it would
// any signed tensor (its readers' biases re-rounded to that scale).
#pragma once

#include <cstdint>
#include <string>

#include "qmodel/quantized_model.h"

namespace octet {

constexpr int kOnnxOpset = 13;

enum class OnnxTarget { Faithful, OnnxRuntime };

// "faithful", "onnxruntime"; the name's target, failing with the choices
// named after `option` (e.g. "--target").
const char* onnx_target_name(OnnxTarget target);
OnnxTarget onnx_target_from_name(const std::string& name, const std::string& option);

struct OnnxExportSummary {
  int opset = kOnnxOpset;
  int64_t nodes = 0;            // ONNX nodes in the graph
  int64_t quantize_linear = 0;  // QuantizeLinear nodes (int8 activations)
  int64_t wide_roundings = 0;   // wide activations rounded in float (QdqGraphWriter::wide_round)
  int64_t wide_narrowed = 0;    // wide activations written at 8 bits (the onnxruntime target)
  int64_t dequantize_linear = 0;
  int64_t initializers = 0;
  int64_t bytes = 0;  // size of the file
};

// Builds the graph, passes it through the ONNX checker and strict shape
// inference, then writes it atomically; fails naming the node it cannot
// express and writes nothing.
OnnxExportSummary export_onnx(const QuantizedModel& model, const std::string& path,
                              OnnxTarget target = OnnxTarget::Faithful);

// Whether the export has a kernel for `op` (interop/onnx_ops.cpp).
bool onnx_exports(Op op);

}  // namespace octet
