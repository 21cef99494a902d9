#include "interop/qdq_writer.h"

namespace octet {

using onnx::TensorProto;

onnx::NodeProto* QdqGraphWriter::node(const std::string& op, const std::vector<std::string>& inputs,
                                      const std::string& output) {
  onnx::NodeProto* n = g_->add_node();
  n->set_op_type(op);
  n->set_name(output);
  for (const std::string& in : inputs) n->add_input(in);
  n->add_output(output);
  if (op == "QuantizeLinear") ++summary.quantize_linear;
  if (op == "DequantizeLinear") ++summary.dequantize_linear;
  ++summary.nodes;
  return n;
}

std::string QdqGraphWriter::step(const std::string& op, const std::vector<std::string>& inputs,
                                 const std::string& output) {
  node(op, inputs, output);
  return output;
}

namespace {

struct ZeroPoint {
  const char* name;
  int data_type;
  int value;
};

ZeroPoint zero_point_of(ActivationType type) {
  switch (type) {
    case ActivationType::Int8: return {"zero_point_int8", TensorProto::INT8, 0};
    case ActivationType::Int8Unsigned: return {"zero_point_int8_minus_128", TensorProto::INT8, -128};
    case ActivationType::Uint8: return {"zero_point_uint8", TensorProto::UINT8, 0};
    case ActivationType::Uint8Centred: return {"zero_point_uint8_128", TensorProto::UINT8, 128};
    case ActivationType::Uint8SevenBit: return {"zero_point_uint8_64", TensorProto::UINT8, 64};
  }
  return {};
}

}  // namespace

float stored_scale(float scale, ActivationType type) {
  return type == ActivationType::Uint8SevenBit ? scale / 2 : scale;
}

std::string QdqGraphWriter::zero_point(ActivationType type) {
  const ZeroPoint z = zero_point_of(type);
  bool& written = has_zero_point_[static_cast<int>(type)];
  if (!written && z.data_type == TensorProto::INT8)
    initializer(z.name, z.data_type, {}, std::vector<int8_t>{static_cast<int8_t>(z.value)});
  if (!written && z.data_type == TensorProto::UINT8)
    initializer(z.name, z.data_type, {}, std::vector<uint8_t>{static_cast<uint8_t>(z.value)});
  written = true;
  return z.name;
}

std::string QdqGraphWriter::quantize(const std::string& x, float scale, const std::string& name,
                                     ActivationType type) {
  const std::string step =
      initializer(name + ".scale", TensorProto::FLOAT, {}, std::vector<float>{1.0f / stored_scale(scale, type)});
  node("QuantizeLinear", {x, step, zero_point(type)}, quantized_name(name));
  return quantized_name(name);
}

std::string QdqGraphWriter::qdq(const std::string& x, float scale, const std::string& name, ActivationType type) {
  node("DequantizeLinear", {quantize(x, scale, name, type), name + ".scale", zero_point(type)}, name);
  return name;
}

std::string QdqGraphWriter::dequantize(const std::string& q, float scale, const std::string& name,
                                       ActivationType type) {
  const std::string step =
      initializer(name + ".scale", TensorProto::FLOAT, {}, std::vector<float>{1.0f / stored_scale(scale, type)});
  node("DequantizeLinear", {q, step, zero_point(type)}, name);
  return name;
}

std::string QdqGraphWriter::wide_round(const std::string& x, float scale, int bits, const std::string& name) {
  const std::string levels = initializer(name + ".levels_per_unit", TensorProto::FLOAT, {}, std::vector<float>{scale});
  const std::string lo =
      initializer(name + ".lowest", TensorProto::FLOAT, {}, std::vector<float>{float(-(1 << (bits - 1)))});
  const std::string hi =
      initializer(name + ".highest", TensorProto::FLOAT, {}, std::vector<float>{float((1 << (bits - 1)) - 1)});
  const std::string rounded = step("Round", {step("Mul", {x, levels}, name + ".scaled")}, name + ".rounded");
  ++summary.wide_roundings;
  return step("Div", {step("Clip", {rounded, lo, hi}, name + ".levels"), levels}, name);
}

void QdqGraphWriter::ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void QdqGraphWriter::integer(onnx::NodeProto* n, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void QdqGraphWriter::real(onnx::NodeProto* n, const std::string& name, float value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void QdqGraphWriter::text(onnx::NodeProto* n, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

void set_float_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(TensorProto::FLOAT);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

}  // namespace octet
