#include "tests/ops/fused_activation_cases.h"

#include <functional>
#include <string>

#include "tests/ops/op_model.h"

namespace octet {

namespace {
// Conv outputs at scale 20 (their int8 levels span -6.4..6.35), so that every
// function's bends fall inside its table.
constexpr float kConvScale = 20.0f;

struct Fused {
  const char* name;
  int64_t batch;
  int c, h, w;
  bool residual;
  std::function<void(OpModel&, int)> build;  // the network after the input
};
}  // namespace

void add_fused_activation_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 8000;  // apart from the other cases' seeds, so that theirs keep their models
  const Fused fused[] = {
      // A dense 3x3 conv (cuda-imma's implicit GEMM, dp4a's conv, cuBLASLt's epilogue).
      {"gelu_after_conv3x3", 3, 16, 6, 7, false,
       [](OpModel& m, int x) { m.activation_op(m.conv(x, 24, 3, 1, 1, false), "gelu", 0, 0, 30.0f); }},
      // 40 channels, padded to 48 or 44: sigmoid(0) is not 0, the padding must stay 0.
      {"sigmoid_after_pointwise_o40", 2, 16, 5, 5, false,
       [](OpModel& m, int x) { m.activation_op(m.conv(x, 40, 1, 1, 0, false), "sigmoid", 0, 0, 127.0f); }},
      // Depthwise: the grouped kernel's rows of four pixels (stride 1), its direct form (stride 2), and
      // a grouped conv (4 channels a thread).
      {"hard_swish_after_depthwise3x3", 2, 32, 7, 7, false,
       [](OpModel& m, int x) {
         m.activation_op(m.conv(x, 32, 3, 1, 1, false, -1, Requant::Typical, 32), "hard_swish", 0, 0, 16.0f);
       }},
      {"hard_swish_after_depthwise3x3_stride2", 2, 32, 9, 9, false,
       [](OpModel& m, int x) {
         m.activation_op(m.conv(x, 32, 3, 2, 1, false, -1, Requant::Typical, 32), "hard_swish", 0, 0, 16.0f);
       }},
      {"silu_after_grouped_conv", 2, 12, 6, 6, false,
       [](OpModel& m, int x) {
         m.activation_op(m.conv(x, 18, 3, 1, 1, false, -1, Requant::Typical, 3), "silu", 0, 0, 19.0f);
       }},
      {"gelu_after_depthwise7x7", 2, 48, 14, 14, false,
       [](OpModel& m, int x) {
         m.activation_op(m.conv(x, 48, 7, 1, 3, false, -1, Requant::Typical, 48), "gelu", 0, 0, 30.0f);
       }},
      {"silu_after_linear", 3, 8, 2, 2, false,
       [](OpModel& m, int x) { m.activation_op(m.linear(m.flatten(x), 20, false), "silu", 0, 0, 19.0f); }},
      {"prelu_after_conv3x3", 2, 12, 6, 6, false,
       [](OpModel& m, int x) { m.prelu(m.conv(x, 20, 3, 1, 1, false), 12.0f); }},
      // After the conv's own ReLU and residual.
      {"tanh_after_conv_relu_residual", 2, 16, 6, 6, true,
       [](OpModel& m, int x) {
         const int skip = m.conv(x, 24, 1, 1, 0, false);
         m.activation_op(m.conv(x, 24, 3, 1, 1, true, skip), "tanh", 0, 0, 127.0f);
       }},
      // A conv output stored as uint8 (zero point -128).
      {"sigmoid_after_unsigned_conv", 2, 16, 5, 6, false,
       [](OpModel& m, int x) {
         m.set_zero_point(-128);
         m.activation_op(m.conv(x, 24, 3, 1, 1, true), "sigmoid", 0, 0, 254.0f);
       }},
      // ConvNeXt's block: depthwise 7x7, LayerNorm, 1x1 to 4C, GELU, 1x1 back with the residual.
      {"convnext_block", 2, 16, 8, 8, true,
       [](OpModel& m, int x) {
         const int norm = m.layer_norm(m.conv(x, 16, 7, 1, 3, false, -1, Requant::Typical, 16), 1e-6f, 20.0f);
         const int wide = m.activation_op(m.conv(norm, 64, 1, 1, 0, false), "gelu", 0, 0, 30.0f);
         m.conv(wide, 16, 1, 1, 0, false, x);
       }},
      // Not fused: the conv's value is read by the gate too (x sigmoid(x), as SiLU in two nodes).
      {"sigmoid_gate_not_fused", 2, 16, 5, 5, false,
       [](OpModel& m, int x) {
         const int c = m.conv(x, 24, 3, 1, 1, false);
         m.mul(c, m.activation_op(c, "sigmoid", 0, 0, 127.0f));
       }},
  };
  for (const Fused& v : fused) {
    const uint64_t s = seed++;
    const auto build = v.build;
    const int c = v.c, h = v.h, w = v.w;
    OpCase one{std::string("fused_") + v.name + "_" + shape_name(v.batch, c, h, w), v.batch, [build, s, c, h, w] {
                 OpModel m(s);
                 const int x = m.input(c, h, w);
                 m.set_scale(kConvScale);
                 build(m, x);
                 return m.finish();
               }};
    one.fused_residual = v.residual;
    cases.push_back(one);
  }
}

}  // namespace octet
