// Writes the nodes and initializers of an ONNX QDQ graph (onnx_export.h),
// counting what it wrote.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "interop/onnx_export.h"

namespace octet {

// How the graph stores an int8 activation of octet (scale s, zero point 0 or -128).
// ONNX Runtime fuses QDQ into its int8 kernels on x86 only for uint8
// activations; its AVX2 u8 x s8 kernels sum products in pairs into int16
// (vpmaddubsw), which saturates once uint8 values pass 127.
enum class ActivationType {
  Int8,          // int8, zero point 0: octet's own values
  Int8Unsigned,  // int8, zero point -128: octet's own values of a tensor it stores unsigned
  Uint8,         // uint8, zero point 0: a non-negative tensor, which may reach 255 where octet saturates at 127
  Uint8Centred,  // uint8, zero point 128: octet's 256 values
  Uint8SevenBit,  // uint8, zero point 64, twice octet's step: a signed tensor a conv or linear reads, kept <= 127
};

// The scale (1 / step) at which `type` stores a tensor of octet scale `scale`.
float stored_scale(float scale, ActivationType type);

class QdqGraphWriter {
 public:
  explicit QdqGraphWriter(onnx::GraphProto* graph) : g_(graph) {}

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);
  // A node with no attributes; returns its output's name.
  std::string step(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);

  template <typename T>
  const std::string& initializer(const std::string& name, int data_type, const std::vector<int64_t>& dims,
                                 const std::vector<T>& values) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
    ++summary.initializers;
    return name;
  }

  // A shared scalar zero point of `type`: QuantizeLinear's output type comes from it.
  std::string zero_point(ActivationType type);
  // QuantizeLinear then DequantizeLinear of a float tensor at octet scale
  // `scale` (q = x * scale): the int8 tensor octet holds, as ONNX sees it,
  // stored as `type` (at stored_scale).
  std::string qdq(const std::string& x, float scale, const std::string& name,
                  ActivationType type = ActivationType::Int8);
  // The stored integers of qdq's result `dequantized`: its QuantizeLinear's output.
  static std::string quantized_name(const std::string& dequantized) { return dequantized + ".quantized"; }
  // qdq's QuantizeLinear alone (for integers nothing reads as float); returns quantized_name(name).
  std::string quantize(const std::string& x, float scale, const std::string& name, ActivationType type);
  // DequantizeLinear of stored integers `q` (octet scale `scale`, stored as `type`) to float `name`.
  std::string dequantize(const std::string& q, float scale, const std::string& name, ActivationType type);
  // A wide activation (NodeQuant::bits) in float, `name`: x * scale rounded
  // half to even (as QuantizeLinear), clamped to the bits' range, / scale.
  std::string wide_round(const std::string& x, float scale, int bits, const std::string& name);

  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values);
  static void integer(onnx::NodeProto* n, const std::string& name, int64_t value);
  static void real(onnx::NodeProto* n, const std::string& name, float value);
  static void text(onnx::NodeProto* n, const std::string& name, const std::string& value);

  onnx::GraphProto* graph() { return g_; }
  OnnxExportSummary summary;

 private:
  onnx::GraphProto* g_;
  bool has_zero_point_[5] = {};  // by ActivationType
};

// A float value of the graph: name and rank-4 dimensions after the batch.
void set_float_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims);

}  // namespace octet
