#include "interop/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"

namespace octet {

namespace {

using onnx::TensorProto;

// IR version 7 is the one released with opset 13.
constexpr int64_t kIrVersion = 7;

class QdqGraphWriter {
 public:
  explicit QdqGraphWriter(onnx::GraphProto* graph) : g_(graph) {}

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
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

  // A node with no attributes; returns its output's name.
  std::string step(const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
    node(op, inputs, output);
    return output;
  }

  template <typename T>
  const std::string& initializer(const std::string& name, int data_type, const std::vector<int64_t>& dims,
                                 const std::vector<T>& values) {
    TensorProto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
    ++summary.initializers;
    return name;
  }

  // A shared scalar int8 zero point: QuantizeLinear's output type comes from it.
  std::string int8_zero() {
    if (!has_int8_zero_) initializer("zero_point_int8", TensorProto::INT8, {}, std::vector<int8_t>{0});
    has_int8_zero_ = true;
    return "zero_point_int8";
  }

  // QuantizeLinear then DequantizeLinear of a float tensor at octet scale
  // `scale` (q = x * scale): the int8 tensor octet holds, as ONNX sees it.
  std::string qdq(const std::string& x, float scale, const std::string& name) {
    const std::string step = initializer(name + ".scale", TensorProto::FLOAT, {}, std::vector<float>{1.0f / scale});
    node("QuantizeLinear", {x, step, int8_zero()}, name + ".quantized");
    node("DequantizeLinear", {name + ".quantized", step, int8_zero()}, name);
    return name;
  }

  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void integer(onnx::NodeProto* n, const std::string& name, int64_t value) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }

  OnnxExportSummary summary;

 private:
  onnx::GraphProto* g_;
  bool has_int8_zero_ = false;
};

void set_float_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(TensorProto::FLOAT);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// The float weight and bias of a conv or linear as DequantizeLinear of its
// int8 weight (per output channel, axis 0) and int32 bias (scale s_in * s_w).
std::pair<std::string, std::string> dequantized_parameters(QdqGraphWriter& w, const Node& n, const NodeQuant& q,
                                                           float input_scale) {
  const int64_t out = q.weight.dim(0);
  std::vector<float> weight_step(out), bias_step(out);
  for (int64_t o = 0; o < out; ++o) {
    weight_step[o] = 1.0f / q.weight_scale.data[o];
    bias_step[o] = (1.0f / input_scale) * weight_step[o];
  }
  const std::string weight = w.initializer(n.name + ".weight_quantized", TensorProto::INT8, q.weight.shape, q.weight.data);
  w.initializer(n.name + ".weight_scale", TensorProto::FLOAT, {out}, weight_step);
  w.initializer(n.name + ".weight_zero_point", TensorProto::INT8, {out}, std::vector<int8_t>(out, 0));
  const std::string bias = w.initializer(n.name + ".bias_quantized", TensorProto::INT32, {out}, q.bias.data);
  w.initializer(n.name + ".bias_scale", TensorProto::FLOAT, {out}, bias_step);
  QdqGraphWriter::integer(
      w.node("DequantizeLinear", {weight, n.name + ".weight_scale", n.name + ".weight_zero_point"}, n.name + ".weight"),
      "axis", 0);
  QdqGraphWriter::integer(w.node("DequantizeLinear", {bias, n.name + ".bias_scale"}, n.name + ".bias"), "axis", 0);
  return {n.name + ".weight", n.name + ".bias"};
}

onnx::ModelProto build_model(const QuantizedModel& m, OnnxExportSummary* summary) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("octet");
  model.set_producer_version("0.1.0");
  model.set_doc_string("octet " + m.model + " on " + m.dataset + ", int8 QDQ (" + m.method + ", " + m.granularity +
                       "); input: normalised float32 NCHW, (pixel / 255 - mean) / std");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  const std::pair<const char*, std::string> metadata[] = {
      {"model", m.model},
      {"dataset", m.dataset},
      {"classes", nlohmann::json(m.classes).dump()},
      {"mean", nlohmann::json(m.mean).dump()},
      {"std", nlohmann::json(m.std).dump()},
      {"method", m.method},
      {"granularity", m.granularity},
  };
  for (const auto& [key, value] : metadata) {
    onnx::StringStringEntryProto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }

  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(m.model + "_int8_qdq");
  QdqGraphWriter w(g);
  std::vector<std::string> value(m.graph.nodes.size());  // each node's int8 output, dequantized
  std::vector<bool> flat(m.graph.nodes.size(), false);    // rank 2 (N x F) rather than NCHW
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const NodeQuant& q = m.quant[i];
    const bool is_output = static_cast<int>(i) == m.output();
    const std::string x = n.inputs.empty() ? std::string() : value[n.inputs[0]];
    const float input_scale = n.inputs.empty() ? 0.0f : m.quant[n.inputs[0]].scale;
    const std::string where = "cannot export node '" + n.name + "' (" + op_name(n.op) + ") to ONNX: ";
    check(!is_output || n.op == Op::Linear, where + "the output must be the linear whose int32 logits octet returns");
    std::string y;  // the float result before this node's own quantization
    switch (n.op) {
      case Op::Input:
        set_float_value(g->add_input(), "input", {n.channels, n.height, n.width});
        value[i] = w.qdq("input", q.scale, n.name + ".int8");  // octet names its input node "input" too
        continue;
      case Op::Conv2d:
      case Op::Linear: {
        const auto [weight, bias] = dequantized_parameters(w, n, q, input_scale);
        if (n.op == Op::Conv2d) {
          y = n.name + ".conv";
          onnx::NodeProto* conv = w.node("Conv", {x, weight, bias}, y);
          QdqGraphWriter::ints(conv, "kernel_shape", {n.kernel, n.kernel});
          QdqGraphWriter::ints(conv, "strides", {n.stride, n.stride});
          QdqGraphWriter::ints(conv, "pads", {n.padding, n.padding, n.padding, n.padding});
        } else {
          std::string rows = x;
          if (!flat[n.inputs[0]]) {
            rows = n.name + ".flat";
            QdqGraphWriter::integer(w.node("Flatten", {x}, rows), "axis", 1);
          }
          y = is_output ? std::string("logits") : n.name + ".gemm";
          QdqGraphWriter::integer(w.node("Gemm", {rows, weight, bias}, y), "transB", 1);
          flat[i] = true;
        }
        if (n.inputs.size() == 2) y = w.step("Add", {y, value[n.inputs[1]]}, n.name + ".residual");
        break;
      }
      case Op::Add: y = w.step("Add", {x, value[n.inputs[1]]}, n.name + ".add"); break;
      case Op::ReLU: y = w.step("Relu", {x}, n.name + ".relu"); break;
      case Op::MaxPool2d:
      case Op::AvgPool2d: {
        y = n.name + ".pool";
        onnx::NodeProto* pool = w.node(n.op == Op::MaxPool2d ? "MaxPool" : "AveragePool", {x}, y);
        QdqGraphWriter::ints(pool, "kernel_shape", {n.kernel, n.kernel});
        QdqGraphWriter::ints(pool, "strides", {n.stride, n.stride});
        break;
      }
      case Op::GlobalAvgPool: y = w.step("GlobalAveragePool", {x}, n.name + ".pool"); break;
      case Op::Flatten:  // no arithmetic: the same int8 values in C, H, W order
        value[i] = n.name;
        QdqGraphWriter::integer(w.node("Flatten", {x}, value[i]), "axis", 1);
        flat[i] = true;
        continue;
      case Op::ShortcutA: {  // every second row and column, zero channels either side: exact on int8 values
        const int64_t end = std::numeric_limits<int64_t>::max(), pad = n.channels;
        w.initializer(n.name + ".starts", TensorProto::INT64, {2}, std::vector<int64_t>{0, 0});
        w.initializer(n.name + ".ends", TensorProto::INT64, {2}, std::vector<int64_t>{end, end});
        w.initializer(n.name + ".axes", TensorProto::INT64, {2}, std::vector<int64_t>{2, 3});
        w.initializer(n.name + ".steps", TensorProto::INT64, {2}, std::vector<int64_t>{2, 2});
        w.initializer(n.name + ".pads", TensorProto::INT64, {8}, std::vector<int64_t>{0, pad, 0, 0, 0, pad, 0, 0});
        w.node("Slice", {x, n.name + ".starts", n.name + ".ends", n.name + ".axes", n.name + ".steps"},
               n.name + ".subsampled");
        value[i] = w.step("Pad", {n.name + ".subsampled", n.name + ".pads"}, n.name);
        continue;
      }
      case Op::BatchNorm2d: fail(where + "a batch norm must be folded before quantization");
    }
    if (n.relu) y = w.step("Relu", {y}, n.name + ".relu");
    if (is_output) {
      check(y == "logits", where + "the output linear cannot take a residual or a ReLU");
      set_float_value(g->add_output(), "logits", {n.channels});
      continue;
    }
    check(q.scale > 0, where + "its int8 output has no scale");
    value[i] = w.qdq(y, q.scale, n.name);
  }
  *summary = w.summary;
  return model;
}

}  // namespace

OnnxExportSummary export_onnx(const QuantizedModel& model, const std::string& path) {
  model.validate();
  OnnxExportSummary summary;
  const onnx::ModelProto proto = build_model(model, &summary);
  try {
    onnx::checker::check_model(proto);
    onnx::ModelProto inferred = proto;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*strict=*/1));
  } catch (const std::exception& e) {
    fail("ONNX export of " + model.model + " to '" + path + "' fails ONNX's own checks: " + e.what());
  }
  std::string bytes;
  check(proto.SerializeToString(&bytes), "cannot serialise the ONNX graph of " + model.model);
  summary.bytes = static_cast<int64_t>(bytes.size());
  write_file_atomically(path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
  return summary;
}

}  // namespace octet
