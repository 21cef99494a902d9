// PRelu: x where x >= 0, else slope[c] x, a slope of its own for each channel
// c (ONNX's PRelu and torch's nn.PReLU(channels): ArcFace's iresnet,
// MobileFaceNet; one slope for all is a leaky ReLU activation). Parameter
// ".weight", the slopes [C]: trained, and kept in quantized models
// (NodeQuant::slope), which make its int8 tables (prelu.h) from them.
#include "graph/ops/prelu.h"

#include <algorithm>
#include <array>
#include <string>

#include "common/error.h"
#include "graph/ops/activation.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

std::vector<int8_t> prelu_tables(const FloatTensor& slope, float input_scale, float output_scale,
                                 int32_t input_zero_point, int32_t output_zero_point) {
  std::vector<int8_t> tables(static_cast<size_t>(slope.numel() * 256));
  Node leaky;
  leaky.op = Op::Activation;
  leaky.function = "leaky_relu";
  for (int64_t c = 0; c < slope.numel(); ++c) {
    leaky.alpha = slope.data[c];
    const std::array<int8_t, 256> t =
        activation_table(leaky, input_scale, output_scale, input_zero_point, output_zero_point);
    std::copy(t.begin(), t.end(), tables.begin() + c * 256);
  }
  return tables;
}

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) { return in[0]; }

std::vector<ParamShape> params(const Node&, const std::vector<ActShape>& in) {
  return {{".weight", {in[0].c}, true}};
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const std::vector<float>& slope = a.layer->weight.data;
  const int64_t C = a.out.c;
  check(static_cast<int64_t>(slope.size()) == C, "prelu '" + a.node.name + "': " + std::to_string(slope.size()) +
                                                     " slopes for " + std::to_string(C) + " channels");
  // Pixel by pixel: a pixel's channels are adjacent (NHWC), so no division per value finds its slope.
  const int64_t pixels = x.numel() / C;
#pragma omp parallel for if (x.numel() >= kMinParallelElements)
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < C; ++c) {
      const float v = x.data[p * C + c];
      a.y.data[p * C + c] = v >= 0 ? v : slope[static_cast<size_t>(c)] * v;
    }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), pixels = x.dim(2) * x.dim(3);
  check(a.q.slope.numel() == C, "prelu '" + a.node.name + "': " + std::to_string(a.q.slope.numel()) +
                                    " slopes for " + std::to_string(C) + " channels");
  const std::vector<int8_t> tables =
      prelu_tables(a.q.slope, a.input_scales.at(0), a.q.scale, a.input_zero_points.at(0), a.q.zero_point);
  a.y = ActTensor(x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) {
    const int64_t c = k / pixels % C;
    a.y.data[k] = tables[static_cast<size_t>(c * 256 + x.data[k] + 128)];
  }
}
}  // namespace

//                          name     in train  weight image  relu   resid  scale  mult  moves
extern const OpDef prelu = {{Op::PRelu, "prelu", 1, false, false, false, false, false, true, 0, false},
                            shape, params, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
