// The ONNX export (interop/onnx_ops.cpp) of every case of the operator
// harness (tests/ops/op_cases.cpp): each model is written, passing ONNX's own
// checker and strict shape inference (export_onnx runs both), with one
// QuantizeLinear per int8 value of the model but those of the operators that
// move values (graph/op_traits.h moves_values: exact without one), and one
// more per fused residual for the ONNX Runtime target (rounded before its Add),
// which writes wide activations at 8 bits where the faithful one rounds them in float.
// A model with a zero point other than octet quantizer's two (0, -128) is
// refused by name, and nothing is written.
#include <gtest/gtest.h>

#include <algorithm>

#include "graph/op.h"
#include "interop/onnx_export.h"
#include "tests/ops/op_cases.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

class OnnxExport : public ::testing::TestWithParam<size_t> {};

// Whether the export refuses `model` for its zero points, as it should: checked here.
bool refused_for_zero_points(const QuantizedModel& model, OnnxTarget target) {
  const bool exportable = std::all_of(model.quant.begin(), model.quant.end(),
                                      [](const NodeQuant& q) { return q.zero_point == 0 || q.zero_point == -128; });
  if (exportable) return false;
  TempDir dir;
  EXPECT_NE(error_of([&] { export_onnx(model, dir.path("model.onnx"), target); }).find("has zero point"),
            std::string::npos);
  EXPECT_FALSE(file_exists(dir.path("model.onnx")));
  return true;
}

// Wide activations (NodeQuant::bits): the faithful target rounds them in float, without a QuantizeLinear.
int64_t wide_activations(const QuantizedModel& model) {
  return std::count_if(model.quant.begin(), model.quant.end(), [](const NodeQuant& q) { return q.bits > 8; });
}

TEST_P(OnnxExport, PassesOnnxChecksWithOneQuantizePerInt8Value) {
  const QuantizedModel model = op_cases()[GetParam()].model();
  if (refused_for_zero_points(model, OnnxTarget::Faithful)) return;
  TempDir dir;
  const OnnxExportSummary summary = export_onnx(model, dir.path("model.onnx"));
  int64_t values = 0;  // a float segment's values stay float: no QuantizeLinear
  const std::vector<bool> float_outputs = model.float_outputs();
  for (int i = 0; i < model.graph.first_output(); ++i)
    values += !op_traits(model.graph.nodes[i].op).moves_values && !float_outputs[i] && model.quant[i].bits == 8;
  EXPECT_EQ(summary.quantize_linear, values);
  EXPECT_EQ(summary.wide_roundings, wide_activations(model));
  EXPECT_GT(summary.bytes, 0);
}

TEST_P(OnnxExport, OnnxRuntimeTargetPassesOnnxChecksRoundingResidualsFirst) {
  const QuantizedModel model = op_cases()[GetParam()].model();
  if (refused_for_zero_points(model, OnnxTarget::OnnxRuntime)) return;
  TempDir dir;
  if (model.mixed_precision()) {  // float nodes export with the faithful target only
    EXPECT_NE(error_of([&] { export_onnx(model, dir.path("model.onnx"), OnnxTarget::OnnxRuntime); })
                  .find("--target faithful"),
              std::string::npos);
    EXPECT_FALSE(file_exists(dir.path("model.onnx")));
    return;
  }
  const OnnxExportSummary summary = export_onnx(model, dir.path("model.onnx"), OnnxTarget::OnnxRuntime);
  int64_t roundings = 0;  // wide activations too: at 8 bits
  for (int i = 0; i < model.graph.first_output(); ++i) {
    const Node& n = model.graph.nodes[i];
    roundings += !op_traits(n.op).moves_values + (op_traits(n.op).absorbs_residual && n.inputs.size() == 2);
  }
  EXPECT_EQ(summary.quantize_linear, roundings);
  EXPECT_EQ(summary.wide_roundings, 0);
  EXPECT_EQ(summary.wide_narrowed, wide_activations(model));
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxExport, ::testing::Range<size_t>(0, op_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return op_cases()[info.param].name; });

}  // namespace
}  // namespace octet
