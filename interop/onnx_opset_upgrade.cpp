#include "interop/onnx_opset_upgrade.h"

#include <onnx/checker.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <exception>
#include <set>
#include <string>

#include "common/error.h"

namespace octet::onnx_import {

int64_t default_opset(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  return opset;
}

namespace {
// ONNX 1.12's Pad 10 -> 11 adapter reads the attribute `value` that Pad-2
// makes optional (default 0, as torch.onnx.export leaves it).
bool lacks_pad_value(const onnx::NodeProto& n) {
  return n.op_type() == "Pad" && std::none_of(n.attribute().begin(), n.attribute().end(),
                                              [](const onnx::AttributeProto& a) { return a.name() == "value"; });
}

// `model` with those values written out (a copy, weights and all: made only where one lacks it).
onnx::ModelProto with_default_pad_values(const onnx::ModelProto& model) {
  onnx::ModelProto filled = model;
  for (onnx::NodeProto& n : *filled.mutable_graph()->mutable_node()) {
    if (!lacks_pad_value(n)) continue;
    onnx::AttributeProto* value = n.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::FLOAT);
    value->set_f(0.0f);
  }
  return filled;
}
}  // namespace

onnx::ModelProto upgraded_model(const onnx::ModelProto& model, int64_t target, const std::string& where) {
  const std::string from = "opset " + std::to_string(default_opset(model));
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    fail(where + ": " + from + " is older than octet reads, and ONNX's checker refuses the file, so it cannot be "
                        "converted: " + e.what());
  }
  // What the checker of ONNX 1.12 lets pass and its converter crashes on (found by fuzzing).
  std::set<std::string> defined;
  for (const auto& in : model.graph().input()) defined.insert(in.name());
  for (const auto& t : model.graph().initializer()) defined.insert(t.name());
  for (const auto& n : model.graph().node()) defined.insert(n.output().begin(), n.output().end());
  for (const auto& out : model.graph().output())
    check(defined.count(out.name()), where + ": the graph's output '" + out.name() + "' is written by no node");
  try {
    const auto& nodes = model.graph().node();
    if (std::any_of(nodes.begin(), nodes.end(), lacks_pad_value))
      return onnx::version_conversion::ConvertVersion(with_default_pad_values(model), static_cast<int>(target));
    return onnx::version_conversion::ConvertVersion(model, static_cast<int>(target));
  } catch (const std::exception& e) {
    fail(where + ": ONNX's version converter cannot take this " + from + " model to opset " + std::to_string(target) +
         ": " + e.what());
  }
}

}  // namespace octet::onnx_import
