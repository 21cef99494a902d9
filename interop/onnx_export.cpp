#include "interop/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "graph/op_traits.h"
#include "interop/onnx_ops.h"

namespace octet {

namespace {

// IR version 7 is the one released with opset 13.
constexpr int64_t kIrVersion = 7;

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
  const std::vector<ActShape> shapes = m.graph.shapes();
  const std::vector<bool> float_outputs = m.float_outputs();  // float segments: no QDQ between their nodes
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const NodeQuant& q = m.quant[i];
    const bool is_output = static_cast<int>(i) == m.output();
    const std::string where = "cannot export node '" + n.name + "' (" + op_name(n.op) + ") to ONNX: ";
    const OnnxOp* op = onnx_op(n.op);
    check(op != nullptr, where + "the export has no kernel for this operator (interop/onnx_ops.cpp)");
    check(!is_output || n.op == Op::Linear, where + "the output must be the linear whose int32 logits octet returns");
    OnnxNodeContext c{w, n, q, is_output, {}, 0.0f, false, {}};
    for (int in : n.inputs) c.inputs.push_back(value[in]);
    if (!n.inputs.empty())
      c.input_scale = m.quant[n.inputs[0]].scale, c.input_flat = flat[n.inputs[0]], c.in = shapes[n.inputs[0]];
    std::string y = op->emit(c);  // the float result before this node's own quantization
    flat[i] = op->flat;
    if (op->quantizes || op_traits(n.op).moves_values) {
      value[i] = y;
      continue;
    }
    if (n.relu) y = w.step("Relu", {y}, n.name + ".relu");
    if (is_output) {
      check(y == "logits", where + "the output linear cannot take a residual or a ReLU");
      set_float_value(g->add_output(), "logits", {n.channels});
      continue;
    }
    check(q.scale > 0, where + "its int8 output has no scale");
    value[i] = float_outputs[i] ? y : w.qdq(y, q.scale, n.name);
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
