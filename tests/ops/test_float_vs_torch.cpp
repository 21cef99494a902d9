// Every case of the operator harness (tests/ops/op_cases.cpp) as a float model:
// the float executor (each operator's float reference) against LibTorch (the
// trainer's kernel of each operator, train/torch_ops.cpp) on the same weights.
// A new operator's cases are checked here with nothing else to add. Cases
// with a fused residual are left out: that form exists only in quantized
// graphs, which the trainer does not build.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/float_executor.h"
#include "tests/ops/op_cases.h"
#include "train/graph_net.h"

namespace octet {
namespace {

// The quantized model's weights and biases, dequantized, as float parameters
// (a node kept in float: its own); a PRelu's slopes, a GroupNorm's affine.
std::map<std::string, FloatTensor> dequantized_params(const QuantizedModel& m) {
  std::map<std::string, FloatTensor> params;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    if (n.op == Op::PRelu) params[n.name + ".weight"] = m.quant[i].slope;
    if (n.op == Op::GroupNorm && n.bias)
      params[n.name + ".weight"] = m.quant[i].norm_scale, params[n.name + ".bias"] = m.quant[i].norm_shift;
    if (!op_traits(n.op).weighted) continue;
    const NodeQuant& q = m.quant[i];
    if (q.in_float) {
      params[n.name + ".weight"] = q.float_weight;
      params[n.name + ".bias"] = q.float_bias;
      continue;
    }
    FloatTensor w(q.weight.shape), b({q.bias.numel()});
    const int64_t per_channel = q.weight.numel() / q.weight.dim(0);
    for (int64_t k = 0; k < w.numel(); ++k) w.data[k] = q.weight.data[k] / q.weight_scale.data[k / per_channel];
    for (int64_t o = 0; o < b.numel(); ++o) b.data[o] = static_cast<float>(q.bias.data[o]) * 1e-4f;
    params[n.name + ".weight"] = std::move(w);
    params[n.name + ".bias"] = std::move(b);
  }
  return params;
}

class FloatVsTorch : public ::testing::TestWithParam<size_t> {};

TEST_P(FloatVsTorch, SameLogitsAsLibTorch) {
  const OpCase& c = op_cases()[GetParam()];
  const QuantizedModel q = c.model();
  ASSERT_FALSE(has_fused_residual(q.graph)) << c.name << " fuses a residual but does not say so (OpCase::fused_residual)";
  FloatModel model{q.graph, dequantized_params(q)};
  const ActShape in = q.graph.shapes()[0];
  const int64_t batch = std::min<int64_t>(c.batch, 8);
  std::vector<float> images = case_images(c, in, batch, 3);
  for (float& v : images) v = std::isfinite(v) ? v : 0.0f;  // the float-image cases hold infinities and NaN
  const std::vector<FloatTensor> outputs = FloatExecutor(model).run_outputs(images.data(), batch);

  GraphNet net(q.graph);
  net->import_state(model.params);
  net->eval();
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> torch_outputs =
      net->forward_outputs(torch::from_blob(images.data(), {batch, in.c, in.h, in.w}, torch::kFloat32));
  ASSERT_EQ(outputs.size(), torch_outputs.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    const FloatTensor& logits = outputs[o];
    torch::Tensor expected = torch_outputs[o];
    if (expected.dim() == 4) expected = expected.permute({0, 2, 3, 1});  // an image of logits: octet's are NHWC
    expected = expected.contiguous();
    ASSERT_EQ(logits.numel(), expected.numel());
    const float* e = expected.data_ptr<float>();
    double largest = 1.0;
    for (int64_t k = 0; k < expected.numel(); ++k) largest = std::max(largest, std::abs(double(e[k])));
    for (int64_t k = 0; k < logits.numel(); ++k)
      ASSERT_NEAR(logits.data[k], e[k], 1e-4 * largest) << c.name << " output " << o << " logit " << k;
  }
}

std::vector<size_t> float_cases() {
  std::vector<size_t> out;
  for (size_t i = 0; i < op_cases().size(); ++i)
    if (!op_cases()[i].fused_residual) out.push_back(i);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, FloatVsTorch, ::testing::ValuesIn(float_cases()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return op_cases()[info.param].name; });

}  // namespace
}  // namespace octet
