#include "interop/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "common/requantize.h"
#include "interop/onnx_export_decode.h"
#include "graph/op_traits.h"
#include "graph/output_view.h"
#include "interop/onnx_ops.h"

namespace octet {

namespace {

// IR version 7 is the one released with opset 13.
constexpr int64_t kIrVersion = 7;

// Operators whose output is non-negative where all their inputs are.
bool keeps_sign(Op op) {
  return op_traits(op).moves_values || op == Op::MaxPool2d || op == Op::AvgPool2d || op == Op::GlobalAvgPool ||
         op == Op::Concat || op == Op::ChannelMean || op == Op::ChannelMax;
}

// The model's outputs (graph/output_view.h) from its output nodes' float values `value`: each node's NCHW logits,
// or a detection head's rows (Reshape to [N, A, K, H, W], Transpose, YOLOv5's decode or a SiLU where it has one,
// Reshape, Concat over axis 1), or YOLOv8's placed parts (onnx_export_decode.h).
void write_model_outputs(QdqGraphWriter& w, const Graph& graph, const std::vector<ActShape>& shapes,
                         const std::vector<std::string>& value) {
  for (const ModelOutput& out : model_outputs(graph, shapes)) {
    if (out.name.empty()) {
      set_float_value(w.graph()->add_output(), value[static_cast<size_t>(out.nodes[0])], out.dims);
      continue;
    }
    check(graph.find(out.name) < 0, "cannot export the output '" + out.name + "': a node of the model has its name");
    if (!graph.nodes[static_cast<size_t>(out.nodes[0])].view.at.empty()) {  // YOLOv8's
      write_yolov8_output(w, graph, shapes, value, out);
      set_float_value(w.graph()->add_output(), out.name, out.dims);
      continue;
    }
    std::vector<std::string> rows;
    for (int o : out.nodes) {
      const std::string& x = value[static_cast<size_t>(o)];
      const OutputView& v = graph.nodes[static_cast<size_t>(o)].view;
      const ActShape& s = shapes[static_cast<size_t>(o)];
      w.initializer(x + ".grouped_shape", onnx::TensorProto::INT64, {5},
                    std::vector<int64_t>{0, v.groups, s.c / v.groups, s.h, s.w});  // 0: the batch, copied
      w.step("Reshape", {x, x + ".grouped_shape"}, x + ".grouped");
      std::vector<int64_t> perm{0};
      for (char axis : v.order) perm.push_back(1 + static_cast<int64_t>(std::string("akhw").find(axis)));
      QdqGraphWriter::ints(w.node("Transpose", {x + ".grouped"}, x + ".permuted"), "perm", perm);
      const DecodeKind kind = v.decode.kind;
      check(kind == DecodeKind::None || kind == DecodeKind::Yolov5 || kind == DecodeKind::Silu,
            "cannot export output '" + graph.nodes[static_cast<size_t>(o)].name + "' of '" + out.name +
                "': a YOLOv8 decode outside YOLOv8's placed parts");
      const std::string permuted = x + ".permuted";
      const std::string arranged =
          kind == DecodeKind::Yolov5 ? write_yolo_decode(w, permuted, v, s)
          : kind == DecodeKind::Silu ? w.step("Mul", {permuted, w.step("Sigmoid", {permuted}, x + ".gate")}, x + ".silu")
                                     : permuted;
      std::vector<int64_t> rows_shape{0};
      for (int64_t d : output_part_dims(v, s)) rows_shape.push_back(d);
      w.initializer(x + ".rows_shape", onnx::TensorProto::INT64, {static_cast<int64_t>(rows_shape.size())},
                    rows_shape);
      rows.push_back(
          w.step("Reshape", {arranged, x + ".rows_shape"}, out.nodes.size() == 1 ? out.name : x + ".rows"));
    }
    if (rows.size() > 1) QdqGraphWriter::integer(w.node("Concat", rows, out.name), "axis", 1);
    set_float_value(w.graph()->add_output(), out.name, out.dims);
  }
}

// How each node's int8 output is stored (onnx_export.h, qdq_writer.h): as
// octet stores it; for ONNX Runtime, uint8 throughout (a tensor octet stores
// unsigned, with zero point -128, as uint8 with zero point 0: the same
// values), since its fused kernels need a node's input and output of one type.
std::vector<ActivationType> activation_types(const QuantizedModel& m, OnnxTarget target) {
  const Graph& graph = m.graph;
  std::vector<ActivationType> types(graph.nodes.size(), ActivationType::Int8);
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (m.quant[i].zero_point != 0) types[i] = ActivationType::Int8Unsigned;
  if (target == OnnxTarget::Faithful) return types;
  std::vector<bool> non_negative(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    non_negative[i] = n.relu || n.op == Op::ReLU || m.quant[i].zero_point != 0 ||
                      (keeps_sign(n.op) && !n.inputs.empty() &&
                       std::all_of(n.inputs.begin(), n.inputs.end(), [&](int in) { return non_negative[in]; }));
  }
  // A signed tensor that a conv or linear reads (through value-moving ops):
  // kept to 7 bits. Backwards, so that a node's readers are settled first.
  std::vector<bool> weighted_reads(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& n = graph.nodes[i];
    if (n.inputs.empty()) continue;
    if (op_traits(n.op).weighted) weighted_reads[n.inputs[0]] = true;
    if (op_traits(n.op).moves_values && weighted_reads[i]) weighted_reads[n.inputs[0]] = true;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    types[i] = op_traits(graph.nodes[i].op).moves_values ? types[graph.nodes[i].inputs[0]]  // the same integers
               : non_negative[i]                          ? ActivationType::Uint8
               : weighted_reads[i]                        ? ActivationType::Uint8SevenBit
                                                          : ActivationType::Uint8Centred;
  return types;
}

// Whether some reader of each node takes its float value, not the stored
// integers that the onnxruntime target's value-moving ops take.
std::vector<bool> read_as_float(const Graph& graph, OnnxTarget target) {
  std::vector<bool> read(graph.nodes.size(), target == OnnxTarget::Faithful);
  for (const Node& n : graph.nodes)
    if (!op_traits(n.op).moves_values)
      for (int in : n.inputs) read[in] = true;
  return read;
}

onnx::ModelProto build_model(const QuantizedModel& m, OnnxTarget target, OnnxExportSummary* summary) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("octet");
  model.set_producer_version("0.1.0");
  model.set_doc_string("octet " + m.model + " on " + m.dataset + ", int8 QDQ (" + m.method + ", " + m.granularity +
                       "); input: normalised float32 NCHW, (pixel / 255 - mean) / std" +
                       (target == OnnxTarget::OnnxRuntime ? "; shaped for ONNX Runtime's QDQ fusion (uint8 activations)"
                                                          : ""));
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
  // The onnxruntime target's value-moving ops move the stored integers (ORT
  // runs Slice, Pad, Flatten, Reshape and Transpose on uint8), not floats.
  std::vector<std::string> stored(m.graph.nodes.size());
  std::vector<bool> flat(m.graph.nodes.size(), false);    // rank 2 (N x F) rather than NCHW
  const std::vector<ActShape> shapes = m.graph.shapes();
  const std::vector<bool> float_outputs = m.float_outputs();  // float segments: no QDQ between their nodes
  const std::vector<ActivationType> types = activation_types(m, target);
  const std::vector<bool> read_float = read_as_float(m.graph, target);
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const NodeQuant& q = m.quant[i];
    const bool is_output = m.graph.is_output(static_cast<int>(i));
    const int first_output = m.graph.first_output();
    const std::string output_name = !is_output                 ? std::string()
                                    : m.graph.output_count == 1 ? std::string("logits")
                                                                : "logits_" + std::to_string(i - first_output);
    const std::string where = "cannot export node '" + n.name + "' (" + op_name(n.op) + ") to ONNX: ";
    const OnnxOp* op = onnx_op(n.op);
    check(op != nullptr, where + "the export has no kernel for this operator (interop/onnx_ops.cpp)");
    check(!is_output || n.op == Op::Linear || n.op == Op::Conv2d,
          where + "the output must be the linear or conv whose int32 logits octet returns");
    const bool moves_stored = op_traits(n.op).moves_values && target == OnnxTarget::OnnxRuntime;
    OnnxNodeContext c{w, target, n, q, types[i], output_name, {}, 0.0f, ActivationType::Int8, false, {}, ""};
    for (int in : n.inputs) c.inputs.push_back(moves_stored ? stored[in] : value[in]);
    if (!n.inputs.empty())
      c.input_scale = m.quant[n.inputs[0]].scale, c.input_type = types[n.inputs[0]], c.input_flat = flat[n.inputs[0]],
      c.in = shapes[n.inputs[0]];
    if (moves_stored) c.fill = w.zero_point(types[i]);
    std::string y = op->emit(c);  // the float result before this node's own quantization
    // N x F: a flatten's or linear's result, and what element-wise operators make of one.
    const bool elementwise = n.op == Op::ReLU || n.op == Op::Activation || n.op == Op::PRelu || n.op == Op::Add ||
                             n.op == Op::Mul;
    flat[i] = op->flat || (elementwise && flat[n.inputs[0]]);
    if (moves_stored) {  // ORT's fusion needs every operator to read a DequantizeLinear
      stored[i] = y;
      if (read_float[i]) value[i] = w.dequantize(y, q.scale, n.name + ".int8", types[i]);
      continue;
    }
    // Moved int8 values are exact without a QuantizeLinear of their own.
    if (op->quantizes || op_traits(n.op).moves_values) {
      value[i] = y;
      stored[i] = QdqGraphWriter::quantized_name(y);
      continue;
    }
    if (n.relu) y = w.step("Relu", {y}, n.name + ".relu");
    if (is_output) {
      check(y == output_name, where + "the output layer cannot take a residual or a ReLU");
      value[i] = y;
      continue;
    }
    check(q.scale > 0, where + "its int8 output has no scale");
    if (float_outputs[i]) {
      value[i] = y;
    } else if (q.bits > 8) {  // read only by convs, as a float
      value[i] = w.wide_round(y, q.scale, q.bits, n.name);
    } else if (read_float[i]) {
      value[i] = w.qdq(y, q.scale, n.name, types[i]);
      stored[i] = QdqGraphWriter::quantized_name(value[i]);
    } else {
      stored[i] = w.quantize(y, q.scale, n.name, types[i]);
    }
  }
  write_model_outputs(w, m.graph, shapes, value);
  *summary = w.summary;
  return model;
}

// The model as the onnxruntime target writes it: ONNX Runtime fuses 8-bit
// QDQ only, and a conv that reads or makes a float tensor runs in float (the
// zoo MobileNetV2's 17 wide activations left 34 of its 52 convs in float:
// about 3x the time of the all-int8 graph). So a wide activation is exported at
// 8 bits over the same amax (its scale times 127 / its highest level), and
// the biases of the convs reading it re-rounded to their new input scale.
QuantizedModel narrowed_to_8_bits(const QuantizedModel& m, int64_t* narrowed) {
  QuantizedModel narrow = m;
  std::vector<double> ratio(m.quant.size(), 1.0);  // new scale / old
  *narrowed = 0;
  for (size_t i = 0; i < m.quant.size(); ++i) {
    NodeQuant& q = narrow.quant[i];
    if (q.bits <= 8) continue;
    ratio[i] = static_cast<double>(highest_output()) / highest_output(q.bits);
    q.scale = static_cast<float>(q.scale * ratio[i]);
    q.bits = 8;
    ++*narrowed;
  }
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    if (n.inputs.empty() || ratio[n.inputs[0]] == 1.0) continue;
    for (int32_t& b : narrow.quant[i].bias.data) b = static_cast<int32_t>(std::nearbyint(b * ratio[n.inputs[0]]));
  }
  return narrow;
}

}  // namespace

const char* onnx_target_name(OnnxTarget target) {
  return target == OnnxTarget::Faithful ? "faithful" : "onnxruntime";
}

OnnxTarget onnx_target_from_name(const std::string& name, const std::string& option) {
  for (const OnnxTarget target : {OnnxTarget::Faithful, OnnxTarget::OnnxRuntime})
    if (name == onnx_target_name(target)) return target;
  fail(option + " " + name + ": faithful or onnxruntime");
}

OnnxExportSummary export_onnx(const QuantizedModel& model, const std::string& path, OnnxTarget target) {
  model.validate();
  check(target == OnnxTarget::Faithful || !model.mixed_precision(),
        "ONNX export of " + model.model + " to '" + path + "': the onnxruntime target exports all-int8 models; " +
            "this one keeps nodes in float (--float-nodes): export it with --target faithful");
  for (size_t i = 0; i < model.quant.size(); ++i)
    check(model.quant[i].zero_point == 0 || model.quant[i].zero_point == -128,
          "ONNX export of " + model.model + " to '" + path + "': node '" + model.graph.nodes[i].name +
              "' has zero point " + std::to_string(model.quant[i].zero_point) +
              "; the export writes 0 (int8) and -128 (uint8 with zero point 0), the two octet's quantizer makes");
  OnnxExportSummary summary;
  int64_t narrowed = 0;
  const onnx::ModelProto proto = target == OnnxTarget::OnnxRuntime
                                     ? build_model(narrowed_to_8_bits(model, &narrowed), target, &summary)
                                     : build_model(model, target, &summary);
  summary.wide_narrowed = narrowed;
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
