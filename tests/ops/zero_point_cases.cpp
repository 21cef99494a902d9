#include "tests/ops/zero_point_cases.h"

#include "tests/ops/op_model.h"
#include "tests/support/random_model.h"

namespace octet {

namespace {

// The zero points of a case: its operator's input (a rescaled copy of the
// image: -128 is a ReLU's output stored unsigned, about half of it at 0), a
// second input's and its output's.
struct ZeroPoints {
  int32_t in, other, out;
};
constexpr ZeroPoints kUnsigned = {-128, -128, -128};
constexpr ZeroPoints kMixed = {-37, 0, 25};
// The two that the CUDA runtime stores (uint8 and int8 bytes) met in one operator.
constexpr ZeroPoints kUnsignedAndSigned = {-128, 0, 0};

std::string zero_points_name(const ZeroPoints& z) {
  auto one = [](int32_t v) { return v < 0 ? "m" + std::to_string(-v) : std::to_string(v); };
  return "_zp" + one(z.in) + "_" + one(z.other) + "_" + one(z.out);
}

// The input image rescaled at zero point z.in: the operator's input.
int zero_point_input(OpModel& m, const ZeroPoints& z, int c, int h, int w) {
  const int image = m.input(c, h, w);
  m.set_zero_point(z.in);
  const int x = m.rescaled(image, 0.5f);
  m.set_zero_point(z.out);
  return x;
}

// A second input beside x, at zero point z.other: a 1x1 conv of it with out_c channels.
int other_input(OpModel& m, const ZeroPoints& z, int x, int out_c, bool relu) {
  m.set_zero_point(z.other);
  const int other = m.conv(x, out_c, 1, 1, 0, relu);
  m.set_zero_point(z.out);
  return other;
}

void add_conv_cases(std::vector<OpCase>& cases, uint64_t& seed) {
  struct Conv {
    int64_t batch;
    int c, h, w, out_c, kernel, stride, padding, dilation, groups;
    bool relu, residual;
    Requant requant;
  };
  const Requant T = Requant::Typical, E = Requant::Extreme;
  // Dense (3x3, 5x5, 1x1 with and without padding, the linear's one line),
  // dilated, depthwise and grouped; ReLU, residual and extreme requantization.
  const Conv convs[] = {
      {2, 3, 9, 9, 16, 3, 1, 1, 1, 1, true, false, T},     {3, 16, 8, 8, 32, 3, 2, 1, 1, 1, true, true, T},
      {2, 5, 7, 7, 17, 5, 1, 2, 1, 1, false, false, T},    {4, 13, 6, 6, 20, 1, 1, 0, 1, 1, true, true, T},
      {1, 4, 10, 10, 24, 1, 1, 1, 1, 1, false, false, T},  {64, 17, 5, 5, 33, 3, 1, 1, 1, 1, true, false, T},
      {2, 64, 8, 8, 64, 3, 1, 1, 1, 1, true, true, T},     {2, 16, 10, 10, 33, 3, 1, 1, 1, 1, true, true, E},
      {2, 16, 12, 12, 32, 3, 1, 2, 2, 1, true, false, T},  {2, 16, 8, 8, 16, 3, 1, 1, 1, 16, true, false, T},
      {3, 24, 9, 9, 24, 5, 2, 2, 1, 24, false, true, T},   {2, 8, 9, 9, 8, 3, 1, 2, 2, 8, true, false, T},
      {2, 20, 6, 6, 20, 3, 1, 1, 1, 20, true, true, E},    {2, 12, 7, 7, 18, 3, 1, 1, 1, 3, true, false, T},
      {4, 64, 12, 12, 64, 3, 1, 1, 1, 16, true, true, T},  {2, 24, 6, 6, 24, 1, 1, 0, 1, 24, true, false, T},
      {2, 37, 5, 5, 37, 1, 1, 0, 1, 37, false, false, E},
  };
  for (const ZeroPoints& z : {kUnsigned, kMixed, kUnsignedAndSigned})
    for (const Conv& v : convs) {
      const uint64_t s = seed++;
      cases.push_back({"conv_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
                           std::to_string(v.kernel) + "s" + std::to_string(v.stride) + "p" +
                           std::to_string(v.padding) + "d" + std::to_string(v.dilation) + "g" +
                           std::to_string(v.groups) + (v.relu ? "_relu" : "") + (v.residual ? "_residual" : "") +
                           (v.requant == E ? "_extreme" : "") + zero_points_name(z),
                       v.batch,
                       [v, z, s] {
                         OpModel m(s);
                         const int x = zero_point_input(m, z, v.c, v.h, v.w);
                         int skip = -1;
                         if (v.residual) {
                           m.set_zero_point(z.other);
                           skip = m.conv(x, v.out_c, v.kernel, v.stride, v.padding, false, -1, T, v.groups, v.dilation);
                           m.set_zero_point(z.out);
                         }
                         m.conv(x, v.out_c, v.kernel, v.stride, v.padding, v.relu, skip, v.requant, v.groups,
                                v.dilation);
                         return m.finish();
                       },
                       CaseImages::Int8, v.residual});
    }
}

// Every other operator that reads or makes a zero point; the output linear
// after each reads one too.
void add_other_cases(std::vector<OpCase>& cases, uint64_t& seed) {
  struct Case {
    std::string name;
    int64_t batch;
    int c, h, w;
    int (*build)(OpModel& m, const ZeroPoints& z, int x);
    bool fused_residual = false;
  };
  const Case others[] = {
      {"linear_o30", 17, 3, 4, 4,
       [](OpModel& m, const ZeroPoints&, int x) { return m.linear(m.flatten(x), 30, true); }},
      {"linear_o12_residual", 5, 12, 1, 1,
       [](OpModel& m, const ZeroPoints& z, int x) {
         const int flat = m.flatten(x);
         m.set_zero_point(z.other);
         const int skip = m.linear(flat, 12, true);
         m.set_zero_point(z.out);
         return m.linear(flat, 12, false, skip);
       },
       true},
      {"max_pool_k3s2p1", 3, 6, 9, 9, [](OpModel& m, const ZeroPoints&, int x) { return m.max_pool(x, 3, 2, 1); }},
      {"avg_pool_k3s2p1", 2, 5, 9, 9, [](OpModel& m, const ZeroPoints&, int x) { return m.avg_pool(x, 3, 2, 1); }},
      {"avg_pool_k2s2", 64, 16, 6, 6, [](OpModel& m, const ZeroPoints&, int x) { return m.avg_pool(x, 2, 2); }},
      {"global_avg_pool", 3, 17, 7, 6, [](OpModel& m, const ZeroPoints&, int x) { return m.global_avg_pool(x); }},
      {"add", 2, 8, 5, 5,
       [](OpModel& m, const ZeroPoints& z, int x) { return m.add(x, other_input(m, z, x, 8, false), false); }},
      {"add_relu", 33, 5, 4, 4,
       [](OpModel& m, const ZeroPoints& z, int x) { return m.add(x, other_input(m, z, x, 5, true), true); }},
      {"relu", 4, 7, 3, 3, [](OpModel& m, const ZeroPoints&, int x) { return m.relu(x); }},
      {"concat_3", 3, 5, 6, 6,
       [](OpModel& m, const ZeroPoints& z, int x) {
         return m.concat({x, other_input(m, z, x, 8, true), other_input(m, z, x, 3, false)});
       }},
      {"mul_per_channel", 3, 17, 7, 6,
       [](OpModel& m, const ZeroPoints& z, int x) {
         m.set_zero_point(z.other);
         const int gate = m.global_avg_pool(x);
         m.set_zero_point(z.out);
         return m.mul(x, gate);
       }},
      {"mul", 2, 6, 5, 5,
       [](OpModel& m, const ZeroPoints& z, int x) { return m.mul(x, other_input(m, z, x, 6, true)); }},
      {"activation_hard_swish", 33, 5, 6, 7,
       [](OpModel& m, const ZeroPoints&, int x) { return m.activation_op(x, "hard_swish", 0.0f, 0.0f, 16.0f); }},
      {"prelu", 2, 17, 5, 4, [](OpModel& m, const ZeroPoints&, int x) { return m.prelu(x, 3.0f); }},
      {"local_response_norm", 3, 17, 5, 4,
       [](OpModel& m, const ZeroPoints&, int x) { return m.local_response_norm(x, 5, 1e-2f, 0.75f, 1.0f, 20.0f); }},
      {"group_norm", 3, 18, 5, 4,
       [](OpModel& m, const ZeroPoints&, int x) { return m.group_norm(x, 6, 1e-5f, 30.0f); }},
      {"group_norm_affine_relu", 2, 18, 4, 4,
       [](OpModel& m, const ZeroPoints&, int x) { return m.group_norm(x, 3, 1e-5f, 30.0f, true, true); }},
      {"layer_norm", 3, 17, 5, 4,
       [](OpModel& m, const ZeroPoints&, int x) { return m.layer_norm(x, 1e-5f, 30.0f); }},
      {"activation_sigmoid", 2, 5, 6, 7,
       [](OpModel& m, const ZeroPoints&, int x) { return m.activation_op(x, "sigmoid", 0.0f, 0.0f, 127.0f); }},
      {"shortcut_a_pad2", 3, 5, 7, 7, [](OpModel& m, const ZeroPoints&, int x) { return m.shortcut_a(x, 2); }},
      {"pad2d_conv_s2p0", 3, 4, 7, 5,
       [](OpModel& m, const ZeroPoints&, int x) {
         Node n;
         n.op = Op::Pad2d, n.inputs = {x};
         n.pad_top = 2, n.pad_left = 1, n.pad_bottom = 0, n.pad_right = 3;
         return m.conv(m.keeps_scale(n), 7, 3, 2, 0, true);
       }},
      {"channel_shuffle_g3", 2, 12, 5, 5,
       [](OpModel& m, const ZeroPoints&, int x) { return m.channel_shuffle(x, 3); }},
      {"channel_slice_5_6", 3, 13, 5, 3,
       [](OpModel& m, const ZeroPoints&, int x) {
         Node n;
         n.op = Op::ChannelSlice, n.inputs = {x}, n.offset = 5, n.channels = 6;
         return m.keeps_scale(n);
       }},
  };
  for (const ZeroPoints& z : {kUnsigned, kMixed, kUnsignedAndSigned})
    for (const Case& v : others) {
      const uint64_t s = seed++;
      cases.push_back({v.name + "_" + shape_name(v.batch, v.c, v.h, v.w) + zero_points_name(z), v.batch,
                       [v, z, s] {
                         OpModel m(s);
                         v.build(m, z, zero_point_input(m, z, v.c, v.h, v.w));
                         return m.finish();
                       },
                       CaseImages::Int8, v.fused_residual});
    }
}

// Whole networks quantized with unsigned activations, as `octet quantize` does by default.
void add_network_cases(std::vector<OpCase>& cases, uint64_t& seed) {
  struct Network {
    const char* name;
    Checkpoint (*checkpoint)(uint64_t seed);
    int64_t batch;
    bool fused_residual;
  };
  const Network networks[] = {
      {"lenet5", [](uint64_t s) { return random_checkpoint("lenet5", ModelOptions{1, 28, 28}, s); }, 5, false},
      {"resnet20", [](uint64_t s) { return random_checkpoint("resnet20", ModelOptions{3, 16, 16}, s); }, 3, true},
      {"grouped", random_grouped_checkpoint, 3, true},
      {"imagenet_ops", random_imagenet_ops_checkpoint, 5, false},
  };
  for (const Network& v : networks) {
    const uint64_t s = seed++;
    cases.push_back({std::string("network_unsigned_") + v.name + "_b" + std::to_string(v.batch), v.batch,
                     [v, s] {
                       QuantizeOptions options = quick_quantize_options();
                       options.unsigned_activations = true;
                       return quantize_random(v.checkpoint(s), options, 32);
                     },
                     CaseImages::Normalised, v.fused_residual});
  }
}

}  // namespace

void add_zero_point_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 12000;
  add_conv_cases(cases, seed);
  add_other_cases(cases, seed);
  add_network_cases(cases, seed);
}

}  // namespace octet
