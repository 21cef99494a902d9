#include "tests/ops/op_cases.h"

#include <limits>
#include <random>

#include "tests/ops/op_model.h"
#include "tests/ops/many_channel_cases.h"
#include "tests/ops/output_cases.h"
#include "tests/ops/shared_task_cases.h"
#include "tests/ops/depthwise_row_cases.h"
#include "tests/ops/fused_activation_cases.h"
#include "tests/ops/rectangular_kernel_cases.h"
#include "tests/ops/wide_cases.h"
#include "tests/ops/zero_point_cases.h"
#include "tests/support/random_model.h"

namespace octet {

std::string shape_name(int64_t batch, int c, int h, int w) {
  return "b" + std::to_string(batch) + "_" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

namespace {

struct Conv {
  int64_t batch;
  int c, h, w, out_c, kernel, stride, padding;
  bool relu, residual;
  Requant requant = Requant::Typical;
};

std::string conv_name(const Conv& v) {
  return "conv_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
         std::to_string(v.kernel) + "s" + std::to_string(v.stride) + "p" + std::to_string(v.padding) +
         (v.relu ? "_relu" : "") + (v.residual ? "_residual" : "") +
         (v.requant == Requant::Extreme ? "_extreme" : "");
}

// A deterministic random sample of conv shapes: kernel 1/3/5, stride 1/2,
// padding 0-2, channels around the multiples of 4, 16 and 32.
std::vector<Conv> sampled_convs(size_t count) {
  std::vector<Conv> convs;
  std::mt19937 rng(2024);
  auto pick = [&](std::initializer_list<int> values) {
    return *(values.begin() + std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng));
  };
  while (convs.size() < count) {
    Conv v{};
    v.kernel = pick({1, 3, 5});
    v.stride = pick({1, 2});
    v.padding = pick({0, 1, 2});
    v.c = pick({1, 3, 4, 5, 8, 15, 16, 17, 32, 33, 64});
    v.out_c = pick({1, 3, 6, 10, 16, 17, 31, 32, 48, 64, 65});
    v.h = pick({1, 2, 5, 8, 13, 16});
    v.w = pick({1, 3, 5, 8, 13, 16});
    v.batch = pick({1, 2, 3, 7, 16, 64});
    v.residual = pick({0, 1});
    v.relu = pick({0, 1});
    v.requant = pick({0, 0, 0, 1}) ? Requant::Extreme : Requant::Typical;
    if (v.h + 2 * v.padding < v.kernel || v.w + 2 * v.padding < v.kernel) continue;
    if (v.batch * v.h * v.w > 4096) v.batch = 1;  // keeps the naive reference quick
    convs.push_back(v);
  }
  return convs;
}

QuantizedModel random_network(const std::string& name, const ModelOptions& options, uint64_t seed,
                              int64_t calibration) {
  return quantize_random(random_checkpoint(name, options, seed), quick_quantize_options(), calibration);
}

// The operators imported CNNs bring (issue 40): padded and ceil_mode pools,
// activations by table, per-channel and element-wise products, concats of
// 2 to 4 inputs at different scales, channel slices. Seeded apart from the
// cases above, so that those keep their models.
void add_image_net_operator_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 5000;
  struct Pool {
    int64_t batch;
    int c, h, w, kernel, stride, padding;
    bool ceil_mode;
  };
  const Pool pools[] = {{2, 5, 9, 9, 3, 2, 1, false},  {3, 6, 8, 8, 3, 2, 1, false}, {2, 4, 8, 8, 3, 2, 0, true},
                        {1, 7, 13, 13, 3, 2, 0, true}, {2, 3, 7, 7, 3, 1, 1, true},  {64, 16, 6, 6, 2, 2, 0, true},
                        {3, 5, 10, 11, 5, 3, 2, true},  {2, 16, 14, 14, 3, 2, 0, true}, {1, 32, 9, 9, 3, 1, 1, false},
                        {2, 8, 12, 12, 8, 3, 0, true}};
  for (const Pool& v : pools) {
    const std::string suffix = shape_name(v.batch, v.c, v.h, v.w) + "_k" + std::to_string(v.kernel) + "s" +
                               std::to_string(v.stride) + "p" + std::to_string(v.padding) + (v.ceil_mode ? "_ceil" : "");
    const uint64_t s = seed++;
    cases.push_back({"max_pool_" + suffix, v.batch, [v, s] {
                       OpModel m(s);
                       m.max_pool(m.input(v.c, v.h, v.w), v.kernel, v.stride, v.padding, v.ceil_mode);
                       return m.finish();
                     }});
    // Average pools: windows cut short by ceil_mode, or padding not counted
    // (torch's count_include_pad=False, TensorFlow's SAME), divide by their count.
    for (const bool exclude_padding : {false, true}) {
      if (exclude_padding && v.padding == 0 && !v.ceil_mode) continue;
      cases.push_back({"avg_pool_" + suffix + (exclude_padding ? "_uncounted" : ""), v.batch, [v, s, exclude_padding] {
                         OpModel m(s);
                         const int x = m.input(v.c, v.h, v.w);
                         m.avg_pool(x, v.kernel, v.stride, v.padding, v.ceil_mode, exclude_padding);
                         return m.finish();
                       }});
    }
  }

  // Windows that differ down and across: a 3x1 window striding 2 down and 1
  // across (audio CNNs over spectrograms), 1x3 padded across only, a 2x3
  // with ceil_mode, and a global pool of a 5x9 image (GlobalMaxPool's).
  struct RectPool {
    int64_t batch;
    int c, h, w;
    PoolAxis rows, columns;
    bool ceil_mode;
  };
  const RectPool rect_pools[] = {{2, 6, 12, 9, {3, 2, 1}, {1, 1, 0}, false}, {1, 8, 7, 10, {1, 1, 0}, {3, 2, 1}, false},
                                 {2, 5, 9, 11, {2, 2, 0}, {3, 1, 1}, true},  {3, 16, 5, 9, {5, 1, 0}, {9, 1, 0}, false},
                                 {1, 4, 13, 8, {4, 3, 2}, {2, 2, 1}, true}};
  uint64_t rect_seed = 7700;  // apart from `seed`, so that the cases after these keep their models
  for (const RectPool& v : rect_pools) {
    const auto axis = [](const PoolAxis& a) {
      return std::to_string(a.kernel) + "s" + std::to_string(a.stride) + "p" + std::to_string(a.padding);
    };
    const std::string suffix = shape_name(v.batch, v.c, v.h, v.w) + "_k" + axis(v.rows) + "x" + axis(v.columns) +
                               (v.ceil_mode ? "_ceil" : "");
    const uint64_t s = rect_seed++;
    cases.push_back({"max_pool_" + suffix, v.batch, [v, s] {
                       OpModel m(s);
                       m.max_pool(m.input(v.c, v.h, v.w), v.rows, v.columns, v.ceil_mode);
                       return m.finish();
                     }});
    for (const bool exclude_padding : {false, true}) {
      if (exclude_padding && v.rows.padding == 0 && v.columns.padding == 0 && !v.ceil_mode) continue;
      cases.push_back({"avg_pool_" + suffix + (exclude_padding ? "_uncounted" : ""), v.batch, [v, s, exclude_padding] {
                         OpModel m(s);
                         m.avg_pool(m.input(v.c, v.h, v.w), v.rows, v.columns, v.ceil_mode, exclude_padding);
                         return m.finish();
                       }});
    }
  }

  // Activations: the input rescaled so that its 256 levels span the
  // function's bends, the output at the scale of its range.
  struct Activation {
    const char* function;
    float alpha, beta, input_scale, output_scale;
  };
  const Activation activations[] = {
      {"clip", 0.0f, 6.0f, 16.0f, 21.0f},          {"clip", -1.0f, 1.0f, 50.0f, 127.0f},
      {"leaky_relu", 0.1f, 0.0f, 10.0f, 12.0f},     {"sigmoid", 0.0f, 0.0f, 20.0f, 127.0f},
      {"hard_sigmoid", 0.2f, 0.5f, 20.0f, 127.0f},  {"hard_sigmoid", 1.0f / 6.0f, 0.5f, 15.0f, 127.0f},
      {"hard_swish", 0.0f, 0.0f, 15.0f, 16.0f},     {"silu", 0.0f, 0.0f, 18.0f, 19.0f},
      {"gelu", 0.0f, 0.0f, 20.0f, 30.0f},          {"tanh", 0.0f, 0.0f, 40.0f, 127.0f},
      {"elu", 1.0f, 0.0f, 20.0f, 25.0f},            {"softplus", 0.0f, 0.0f, 20.0f, 25.0f},
      {"mish", 0.0f, 0.0f, 20.0f, 25.0f},           {"selu", 1.6732632f, 1.0507010f, 20.0f, 25.0f},
      {"celu", 0.5f, 0.0f, 20.0f, 25.0f},
  };
  const Activation* previous = nullptr;
  for (const Activation& v : activations) {
    for (const int64_t batch : {int64_t{1}, int64_t{33}}) {
      const uint64_t s = seed++;
      const bool again = previous && std::string(previous->function) == v.function;
      cases.push_back({std::string("activation_") + v.function + (again ? "_2" : "") + "_" +
                           shape_name(batch, 5, 6, 7),
                       batch, [v, s] {
                         OpModel m(s);
                         const int x = m.rescaled(m.input(5, 6, 7), v.input_scale);
                         m.activation_op(x, v.function, v.alpha, v.beta, v.output_scale);
                         return m.finish();
                       }});
    }
    previous = &v;
  }
  // A norm's steps (ConvNeXt-V2's GRN): its squares, the square root of alpha times their mean, a reciprocal
  // (its pole between integers: the float cases read integer images).
  uint64_t norm_seed = 8040;  // apart from `seed`, so that the cases after these keep their models
  for (const Activation& v : {Activation{"square", 0.0f, 0.0f, 20.0f, 3.0f},
                              Activation{"sqrt", 4.0f, 0.0f, 20.0f, 25.0f},
                              Activation{"reciprocal", 1.0f, 8.5f, 20.0f, 200.0f},
                              Activation{"reciprocal", -0.5f, 4.25f, 20.0f, 100.0f}})
    for (const int64_t batch : {int64_t{1}, int64_t{33}}) {
      const uint64_t s = norm_seed++;
      cases.push_back({std::string("activation_") + v.function + (v.alpha < 0 ? "_negative" : "") + "_" +
                           shape_name(batch, 5, 6, 7),
                       batch, [v, s] {
                         OpModel m(s);
                         m.activation_op(m.rescaled(m.input(5, 6, 7), v.input_scale), v.function, v.alpha, v.beta,
                                         v.output_scale);
                         return m.finish();
                       }});
    }
  // A softmax's numerators: exp of values clipped to [alpha, beta] (float's exp of the int8 images' -128 would
  // be 0 and of 127 infinite): up to 0 (their largest subtracted, levels 1/127 of 1), and of either sign.
  uint64_t exp_seed = 8060;
  for (const Activation& v :
       {Activation{"exp", -6.0f, 0.0f, 20.0f, 127.0f}, Activation{"exp", -3.0f, 4.0f, 30.0f, 2.0f}})
    for (const int64_t batch : {int64_t{1}, int64_t{33}}) {
      const uint64_t s = exp_seed++;
      cases.push_back({std::string("activation_exp_") + (v.beta > 0 ? "either_sign_" : "") + shape_name(batch, 5, 6, 7),
                       batch, [v, s] {
                         OpModel m(s);
                         const int x = m.rescaled(m.input(5, 6, 7), v.input_scale);
                         m.activation_op(m.activation_op(x, "clip", v.alpha, v.beta, v.input_scale), v.function, 0.0f,
                                         0.0f, v.output_scale);
                         return m.finish();
                       }});
    }

  // PRelu: one channel, a few, and more than a vector's worth; at batch 1 and
  // one of many pixels.
  struct Slopes {
    int64_t batch;
    int c, h, w;
    float input_scale, output_scale;
  };
  for (const Slopes& v : {Slopes{1, 1, 3, 3, 10.0f, 12.0f}, Slopes{2, 5, 6, 7, 10.0f, 8.0f},
                          Slopes{33, 70, 3, 2, 4.0f, 5.0f}, Slopes{3, 64, 5, 5, 20.0f, 20.0f}}) {
    const uint64_t s = seed++;
    cases.push_back({"prelu_" + shape_name(v.batch, v.c, v.h, v.w), v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.rescaled(m.input(v.c, v.h, v.w), v.input_scale);
                       m.prelu(x, v.output_scale);
                       return m.finish();
                     }});
  }

  // LayerNorm over each pixel's channels: two channels, a few, ConvNeXt's 96,
  // more than a warp of the CUDA kernel's 4-byte vectors hold (130) and of
  // its 16-byte ones (600: two per lane for some lanes); an epsilon that
  // outweighs a variance of few levels; zero (constant pixels normalise to 0).
  struct Norm {
    int64_t batch;
    int c, h, w;
    float epsilon, input_scale, output_scale;
    const char* epsilon_name;
  };
  for (const Norm& v : {Norm{2, 2, 3, 3, 1e-2f, 10.0f, 30.0f, "1e2"}, Norm{3, 3, 5, 4, 1e-5f, 10.0f, 80.0f, "1e5"},
                        Norm{1, 16, 6, 6, 1e-6f, 1.0f, 30.0f, "1e6"}, Norm{4, 96, 4, 3, 1e-6f, 3.0f, 25.0f, "1e6"},
                        Norm{2, 130, 3, 2, 0.5f, 2.0f, 40.0f, "half"}, Norm{1, 600, 2, 3, 1e-5f, 2.0f, 30.0f, "1e5"},
                        Norm{5, 7, 4, 4, 0.0f, 100.0f, 60.0f, "0"}}) {
    const uint64_t s = seed++;
    cases.push_back({"layer_norm_" + shape_name(v.batch, v.c, v.h, v.w) + "_eps" + v.epsilon_name, v.batch,
                     [v, s] {
                       OpModel m(s);
                       const int x = m.rescaled(m.input(v.c, v.h, v.w), v.input_scale);
                       m.conv(m.layer_norm(x, v.epsilon, v.output_scale), 5, 1, 1, 0, false);
                       return m.finish();
                     }});
  }

  // GroupNorm over runs of channels at every pixel: ResNet-GN's 32 groups of
  // 2 channels, InstanceNorm's one channel a group, one group of all, groups
  // across the CPU kernel's blocks of 64 channels (3 of 32 in 96; 65 of 2 in
  // 130), a 1 x 1 image, and epsilons that outweigh a few levels or are 0;
  // an affine per channel, and a ReLU after it (ResNet-GN's GroupNorm and ReLU).
  struct Groups {
    int64_t batch;
    int c, h, w, groups;
    float epsilon, input_scale, output_scale;
    bool affine, relu;
  };
  for (const Groups& v : {Groups{2, 64, 8, 8, 32, 1e-5f, 10.0f, 30.0f, false, false},
                          Groups{3, 16, 6, 5, 16, 1e-5f, 4.0f, 40.0f, false, false},
                          Groups{2, 12, 3, 3, 1, 1e-2f, 10.0f, 25.0f, false, false},
                          Groups{1, 96, 5, 4, 3, 1e-6f, 2.0f, 30.0f, false, false},
                          Groups{2, 130, 3, 2, 65, 0.5f, 2.0f, 40.0f, false, false},
                          Groups{4, 40, 1, 1, 4, 1e-5f, 10.0f, 30.0f, false, false},
                          Groups{2, 8, 4, 4, 2, 0.0f, 100.0f, 60.0f, false, false},
                          Groups{2, 64, 6, 6, 32, 1e-5f, 10.0f, 30.0f, true, false},
                          Groups{3, 33, 4, 3, 3, 1e-5f, 4.0f, 20.0f, true, true},
                          Groups{2, 130, 3, 2, 65, 1e-5f, 2.0f, 25.0f, true, true}}) {
    const uint64_t s = seed++;
    cases.push_back({"group_norm_" + shape_name(v.batch, v.c, v.h, v.w) + "_groups" + std::to_string(v.groups) +
                         (v.affine ? "_affine" : "") + (v.relu ? "_relu" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.rescaled(m.input(v.c, v.h, v.w), v.input_scale);
                       const int y = m.group_norm(x, v.groups, v.epsilon, v.output_scale, v.affine, v.relu);
                       m.conv(y, 5, 1, 1, 0, false);
                       return m.finish();
                     }});
  }

  // The AVX2 kernels' channel counts (multiples of 16): GroupNorm with an
  // affine and a ReLU, and LayerNorm, at zero points too (input -37, output -128).
  uint64_t avx2_seed = 7800;  // apart from `seed`, so that the cases after these keep their models
  for (const int32_t zero_point : {0, -37}) {
    const uint64_t s = avx2_seed++;
    const std::string name = std::string("group_norm_b3_48x5x3_groups4_affine_relu") + (zero_point ? "_zpm37" : "");
    cases.push_back({name, 3, [zero_point, s] {
                       OpModel m(s);
                       m.set_zero_point(zero_point);
                       const int x = m.rescaled(m.input(48, 5, 3), 6.0f);
                       m.set_zero_point(zero_point ? -128 : 0);
                       m.conv(m.group_norm(x, 4, 1e-5f, 30.0f, true, true), 5, 1, 1, 0, false);
                       return m.finish();
                     }});
    const std::string layer_name = std::string("layer_norm_b3_48x5x3") + (zero_point ? "_zpm37" : "");
    const uint64_t layer_seed = avx2_seed++;
    cases.push_back({layer_name, 3, [zero_point, layer_seed] {
                       OpModel m(layer_seed);
                       m.set_zero_point(zero_point);
                       const int x = m.rescaled(m.input(48, 5, 3), 6.0f);
                       m.set_zero_point(zero_point ? -128 : 0);
                       m.conv(m.layer_norm(x, 1e-5f, 30.0f), 5, 1, 1, 0, false);
                       return m.finish();
                     }});
  }

  // LocalResponseNorm: AlexNet's (size 5, alpha 1e-4, beta 0.75, bias 1) on
  // values whose squares it weighs (input scale 1: levels of +-100 units),
  // an even size (ONNX's window one channel longer after than before), a
  // window wider than the channels, size 1, other betas and biases.
  struct Lrn {
    int64_t batch;
    int c, h, w, size;
    float alpha, beta, bias, input_scale, output_scale;
  };
  for (const Lrn& v :
       {Lrn{2, 96, 5, 4, 5, 1e-4f, 0.75f, 1.0f, 1.0f, 1.3f}, Lrn{3, 17, 3, 3, 4, 1e-3f, 0.5f, 2.0f, 1.0f, 2.0f},
        Lrn{1, 2, 6, 5, 5, 1e-4f, 0.75f, 1.0f, 1.0f, 1.3f}, Lrn{4, 9, 2, 3, 1, 1e-2f, 1.0f, 1.0f, 4.0f, 4.0f},
        Lrn{2, 33, 3, 4, 7, 5e-4f, 2.0f, 0.5f, 2.0f, 8.0f}}) {
    const uint64_t s = seed++;
    cases.push_back({"local_response_norm_" + shape_name(v.batch, v.c, v.h, v.w) + "_size" + std::to_string(v.size),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.rescaled(m.input(v.c, v.h, v.w), v.input_scale);
                       m.local_response_norm(x, v.size, v.alpha, v.beta, v.bias, v.output_scale);
                       return m.finish();
                     }});
  }

  // Mul: a squeeze-and-excitation gate (one value per channel) and an
  // element-wise product.
  struct Product {
    int64_t batch;
    int c, h, w;
    bool per_channel;
  };
  for (const Product& v : {Product{1, 8, 5, 5, true}, Product{3, 17, 7, 6, true}, Product{64, 16, 4, 4, true},
                           Product{2, 6, 5, 5, false}, Product{5, 3, 9, 2, false}}) {
    const uint64_t s = seed++;
    cases.push_back({"mul_" + shape_name(v.batch, v.c, v.h, v.w) + (v.per_channel ? "_per_channel" : ""), v.batch,
                     [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       const int gate = v.per_channel ? m.global_avg_pool(x) : m.conv(x, v.c, 1, 1, 0, false);
                       m.mul(x, gate);
                       return m.finish();
                     }});
  }

  // Each pixel's channels reduced (ChannelMean, ChannelMax) and a gate per
  // pixel (Mul by 1 x H x W): CBAM's spatial attention, mean and max of the
  // channels concatenated, a 7x7 conv, a sigmoid, the product; unsigned inputs.
  uint64_t attention_seed = 7960;  // apart from `seed`, so that the cases after these keep their models
  struct Attention {
    int64_t batch;
    int c, h, w;
    bool unsigned_input;
  };
  for (const Attention& v : {Attention{2, 16, 5, 6, false}, Attention{3, 7, 4, 9, true}, Attention{64, 3, 3, 3, false},
                             Attention{2, 40, 8, 8, true}}) {
    const std::string name = shape_name(v.batch, v.c, v.h, v.w) + (v.unsigned_input ? "_uint8" : "");
    const auto input = [v](OpModel& m) { return m.input(v.c, v.h, v.w, v.unsigned_input); };
    const uint64_t reduced = attention_seed++, gated = attention_seed++, spatial = attention_seed++;
    cases.push_back({"channel_mean_max_" + name, v.batch, [input, reduced] {
                       OpModel m(reduced);
                       const int x = input(m);
                       m.concat({m.channel_mean(x), m.channel_max(x)});
                       return m.finish();
                     }});
    cases.push_back({"mul_per_pixel_" + name, v.batch, [input, v, gated] {
                       OpModel m(gated);
                       const int x = input(m);
                       m.mul(x, m.conv(x, 1, 1, 1, 0, v.unsigned_input));
                       return m.finish();
                     }});
    cases.push_back({"spatial_attention_" + name, v.batch, [input, spatial] {
                       OpModel m(spatial);
                       const int x = input(m);
                       const int pooled = m.concat({m.channel_mean(x), m.channel_max(x)});
                       m.mul(x, m.activation_op(m.conv(pooled, 1, 7, 1, 3, false), "sigmoid", 0, 0, 1.0f / 255));
                       return m.finish();
                     }});
  }

  // Concat of the input and 1 to 3 convs of it (each its own channel count and requantization).
  struct Join {
    int64_t batch;
    int c, h, w;
    std::vector<int> branch_channels;
  };
  // The last: inputs past 64 channels, whole vectors of the VBMI lookup and a tail.
  for (const Join& v : {Join{1, 4, 5, 5, {3}}, Join{3, 5, 6, 6, {8, 13}}, Join{2, 16, 4, 4, {16, 7, 1}},
                        Join{64, 3, 3, 3, {5, 6}}, Join{2, 70, 3, 3, {130, 9}}}) {
    const uint64_t s = seed++;
    cases.push_back({"concat_" + std::to_string(v.branch_channels.size() + 1) + "_" + shape_name(v.batch, v.c, v.h, v.w),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       std::vector<int> inputs = {x};
                       for (int channels : v.branch_channels) inputs.push_back(m.conv(x, channels, 1, 1, 0, false));
                       m.concat(inputs);
                       return m.finish();
                     }});
  }

  // Channel slices: the first half, a middle run, the last channel.
  struct Slice {
    int64_t batch;
    int c, h, w, offset, channels;
  };
  for (const Slice& v : {Slice{2, 8, 4, 4, 0, 4}, Slice{3, 13, 5, 3, 5, 6}, Slice{1, 7, 2, 2, 6, 1}}) {
    const uint64_t s = seed++;
    cases.push_back({"channel_slice_" + shape_name(v.batch, v.c, v.h, v.w) + "_" + std::to_string(v.offset) + "_" +
                         std::to_string(v.channels),
                     v.batch, [v, s] {
                       OpModel m(s);
                       Node n;
                       n.op = Op::ChannelSlice, n.inputs = {m.input(v.c, v.h, v.w)};
                       n.offset = v.offset, n.channels = v.channels;
                       m.keeps_scale(n);
                       return m.finish();
                     }});
  }

  // Zeros on each side apart (Pad2d), alone and before a conv (depthwise for
  // one) that pads what every side shares: TensorFlow's "SAME" padding at
  // stride 2 pads only the bottom and right.
  struct Padding {
    int64_t batch;
    int c, h, w, top, left, bottom, right;
    int conv_padding;  // -1: no conv
    int groups;
  };
  const auto add_padding_case = [&cases](const char* prefix, const Padding& v, uint64_t s) {
    std::string sides;  // a negative side as m and its size: gtest's names take no '-'
    for (const int side : {v.top, v.left, v.bottom, v.right})
      sides += side < 0 ? "m" + std::to_string(-side) : std::to_string(side);
    const std::string conv = v.conv_padding < 0 ? "" : "_conv_s2p" + std::to_string(v.conv_padding) + "_g" +
                                                           std::to_string(v.groups);
    cases.push_back({prefix + shape_name(v.batch, v.c, v.h, v.w) + "_" + sides + conv, v.batch, [v, s] {
                       OpModel m(s);
                       Node n;
                       n.op = Op::Pad2d, n.inputs = {m.input(v.c, v.h, v.w)};
                       n.pad_top = v.top, n.pad_left = v.left, n.pad_bottom = v.bottom, n.pad_right = v.right;
                       const int padded = m.keeps_scale(n);
                       if (v.conv_padding >= 0)
                         m.conv(padded, v.groups == 1 ? 7 : v.c, 3, 2, v.conv_padding, true, -1, Requant::Typical,
                                v.groups);
                       return m.finish();
                     }});
  };
  for (const Padding& v : {Padding{2, 5, 6, 6, 0, 0, 1, 1, -1, 1}, Padding{3, 4, 7, 5, 2, 1, 0, 3, -1, 1},
                           Padding{1, 8, 8, 8, 0, 0, 1, 1, 0, 1}, Padding{16, 6, 5, 5, 1, 0, 1, 0, 1, 6},
                           Padding{64, 3, 3, 4, 0, 2, 0, 0, 1, 1}})
    add_padding_case("pad2d_", v, seed++);
  // Negative sides remove rows and columns (a TCN's Chomp1d, a center crop), one
  // side padded while the other is cropped (a causal shift), before a conv too.
  uint64_t crop_seed = 7950;  // apart from `seed`, so that the cases after these keep their models
  for (const Padding& v : {Padding{2, 5, 6, 9, 0, 0, 0, -2, -1, 1}, Padding{3, 4, 7, 5, -1, 0, -2, 0, -1, 1},
                           Padding{2, 6, 1, 12, 0, 3, 0, -3, 1, 6}, Padding{64, 3, 5, 5, -2, -2, -2, -2, -1, 1},
                           Padding{2, 16, 4, 9, 1, -4, -2, 2, 1, 1}})
    add_padding_case("crop2d_", v, crop_seed++);
  // Pixels into channels as the importer makes them (interop/onnx_import_space_to_depth.cpp): each
  // of the b x b offsets cropped and kept every b-th pixel by a max pool of 1 x 1 windows striding b,
  // the offsets concatenated (SpaceToDepth, YOLOv5's Focus), then shuffled (PixelUnshuffle).
  struct SpaceToDepth {
    int64_t batch;
    int c, h, w, block;
    bool shuffled;
  };
  uint64_t space_seed = 7980;
  for (const SpaceToDepth& v : {SpaceToDepth{2, 3, 8, 8, 2, false}, SpaceToDepth{3, 5, 6, 10, 2, true},
                                SpaceToDepth{1, 3, 12, 8, 4, false}, SpaceToDepth{16, 16, 6, 6, 3, true}}) {
    const uint64_t s = space_seed++;
    cases.push_back({"space_to_depth_" + shape_name(v.batch, v.c, v.h, v.w) + "_b" + std::to_string(v.block) +
                         (v.shuffled ? "_shuffled" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       std::vector<int> offsets;
                       for (int dy = 0; dy < v.block; ++dy)
                         for (int dx = 0; dx < v.block; ++dx) {
                           Node crop;
                           crop.op = Op::Pad2d, crop.inputs = {x}, crop.pad_top = -dy, crop.pad_left = -dx;
                           offsets.push_back(m.max_pool(m.keeps_scale(crop), {1, v.block, 0}, {1, v.block, 0}, false));
                         }
                       const int y = m.concat(offsets);
                       if (v.shuffled) m.channel_shuffle(y, v.block * v.block);
                       return m.finish();
                     }});
  }
  // Nearest-neighbour upsampling by whole factors (ONNX's Resize, nn.Upsample), alone and as HRNet
  // fuses its branches: a coarse branch (a stride-2 or -4 conv) brought up and added to the fine one.
  struct Upsampling {
    int64_t batch;
    int c, h, w, down, across;
    bool fused;  // upsample a strided conv of the input and add it to a conv of the input
  };
  uint64_t upsample_seed = 8020;
  for (const Upsampling& v : {Upsampling{2, 5, 6, 6, 2, 2, false}, Upsampling{3, 4, 7, 5, 3, 1, false},
                              Upsampling{1, 8, 1, 9, 1, 2, false}, Upsampling{64, 3, 3, 4, 4, 4, false},
                              Upsampling{2, 6, 8, 8, 2, 2, true}, Upsampling{16, 16, 12, 8, 4, 4, true}}) {
    const uint64_t s = upsample_seed++;
    cases.push_back({"upsample_" + shape_name(v.batch, v.c, v.h, v.w) + "_" + std::to_string(v.down) + "x" +
                         std::to_string(v.across) + (v.fused ? "_fused" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       Node up;
                       up.op = Op::Upsample, up.stride = v.down, up.stride_w = v.across != v.down ? v.across : 0;
                       if (!v.fused) {
                         up.inputs = {x};
                         m.keeps_scale(up);
                         return m.finish();
                       }
                       const int fine = m.conv(x, 7, 3, 1, 1, false);
                       up.inputs = {m.conv(x, 7, 3, v.down, 1, false)};
                       m.add(fine, m.keeps_scale(up), true);
                       return m.finish();
                     }});
  }
  // ... and to a size, no whole factor: an FPN's F.interpolate(size=...) where a side is odd, a coarse
  // branch (a stride-2 conv of 7 x 9 pixels: 4 x 5) brought back to 7 x 9 and added; down as well as up.
  struct ToSize {
    int64_t batch;
    int c, h, w, out_h, out_w;
    bool fused;
  };
  for (const ToSize& v : {ToSize{2, 5, 6, 6, 11, 13, false}, ToSize{3, 4, 7, 5, 3, 9, false},
                          ToSize{1, 8, 1, 9, 1, 20, false}, ToSize{16, 6, 7, 9, 7, 9, true}}) {
    const uint64_t s = upsample_seed++;
    cases.push_back({"upsample_to_" + std::to_string(v.out_h) + "x" + std::to_string(v.out_w) + "_" +
                         shape_name(v.batch, v.c, v.h, v.w) + (v.fused ? "_fused" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       Node up;
                       up.op = Op::Upsample, up.height = v.out_h, up.width = v.out_w;
                       if (!v.fused) {
                         up.inputs = {x};
                         m.keeps_scale(up);
                         return m.finish();
                       }
                       const int fine = m.conv(x, 7, 3, 1, 1, false);
                       up.inputs = {m.conv(x, 7, 3, 2, 1, false)};
                       m.add(fine, m.keeps_scale(up), true);
                       return m.finish();
                     }});
  }
  // Bilinear upsampling (F.interpolate(mode="bilinear"), a segmentation head's scores brought back to the input's
  // size, a U-Net's decoder): the edges clamped, factors that differ down and across, a 1-pixel axis, values stored
  // as uint8 (zero point -128), and ahead of an output conv (an image of logits); 17 and 40 channels for the AVX2
  // blends' 16 lanes and their tails, factor 64 for the largest weights and shift. Corners aligned
  // (align_corners=True) and factors not powers of two divide by their weights' sum: 2x2 at 6 pixels (11ths), x3
  // (6ths), 33 rows x 64 (2111ths: int32 rows), and 5 -> 65 pixels, whose 16ths still shift. Sizes that are no
  // whole factors (out_h x out_w): 5 x 7 -> 13 x 17, down to 5 x 4, corners aligned 65 -> 513 (8ths, shifts), and
  // 1 -> 32768 pixels across (65536ths: a power of two, but weights beyond int16's).
  struct Bilinear {
    int64_t batch;
    int c, h, w, down, across;
    bool unsigned_values, into_logits, align_corners = false;
    int out_h = 0, out_w = 0;
  };
  uint64_t bilinear_seed = 8090;
  for (const Bilinear& v : {Bilinear{2, 5, 6, 6, 2, 2, false, false}, Bilinear{3, 4, 7, 5, 4, 1, false, false},
                            Bilinear{1, 8, 1, 9, 2, 8, false, false}, Bilinear{16, 3, 3, 4, 8, 8, false, false},
                            Bilinear{64, 17, 2, 2, 2, 2, true, false}, Bilinear{4, 6, 5, 3, 4, 4, true, true},
                            Bilinear{2, 40, 3, 2, 64, 4, true, false}, Bilinear{2, 5, 6, 6, 2, 2, false, false, true},
                            Bilinear{3, 4, 7, 5, 3, 1, false, false}, Bilinear{1, 17, 5, 4, 4, 8, true, false, true},
                            Bilinear{4, 6, 5, 3, 2, 2, true, true, true},
                            Bilinear{1, 3, 33, 2, 64, 2, false, false, true},
                            Bilinear{2, 9, 5, 5, 13, 13, false, false, true},
                            Bilinear{2, 5, 5, 7, 1, 1, false, false, false, 13, 17},
                            Bilinear{1, 17, 5, 4, 1, 1, true, false, true, 12, 9},
                            Bilinear{3, 4, 8, 6, 1, 1, false, false, false, 5, 4},
                            Bilinear{1, 3, 65, 3, 1, 1, false, false, true, 513, 5},
                            Bilinear{2, 6, 3, 5, 1, 1, true, true, false, 7, 11},
                            Bilinear{1, 3, 2, 1, 1, 1, false, true, false, 4, 32768}}) {
    const uint64_t s = bilinear_seed++;
    cases.push_back({"upsample_bilinear_" + shape_name(v.batch, v.c, v.h, v.w) + "_" + std::to_string(v.down) + "x" +
                         std::to_string(v.across) + (v.unsigned_values ? "_uint8" : "") +
                         (v.into_logits ? "_logits" : "") + (v.align_corners ? "_corners" : "") +
                         (v.out_h ? "_to" + std::to_string(v.out_h) + "x" + std::to_string(v.out_w) : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       int x = m.input(v.c, v.h, v.w);
                       if (v.unsigned_values) {
                         m.set_zero_point(-128);
                         x = m.conv(x, v.c, 3, 1, 1, true);
                       }
                       Node up;
                       up.op = Op::UpsampleBilinear, up.stride = v.down;
                       up.stride_w = v.across != v.down ? v.across : 0;
                       up.align_corners = v.align_corners;
                       up.height = v.out_h, up.width = v.out_w;
                       up.inputs = {x};
                       m.keeps_scale(up);
                       return v.into_logits ? m.finish_with_conv(1, 5) : m.finish();
                     }});
  }
  // Channels spread over block x block pixels (pixel_shuffle; the importer's transposed convs): alone, after a
  // conv of block^2 x its channels (a U-Net's 2x2 up-convolution, ESPCN's last layer), values stored as uint8;
  // 37 and 20 channels out, for the CPU kernel's vectorized spread and its tail.
  struct DepthToSpace {
    int64_t batch;
    int c, h, w, block;
    bool after_conv;
  };
  uint64_t depth_seed = 8100;
  for (const DepthToSpace& v : {DepthToSpace{2, 8, 3, 5, 2, false}, DepthToSpace{3, 27, 2, 2, 3, false},
                                DepthToSpace{16, 5, 4, 4, 2, true}, DepthToSpace{1, 3, 5, 3, 4, true},
                                DepthToSpace{2, 148, 3, 4, 2, false}, DepthToSpace{1, 180, 2, 3, 3, false}}) {
    const uint64_t s = depth_seed++;
    cases.push_back({"depth_to_space_" + shape_name(v.batch, v.c, v.h, v.w) + "_b" + std::to_string(v.block) +
                         (v.after_conv ? "_conv_uint8" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       int x = m.input(v.c, v.h, v.w);
                       if (v.after_conv) {
                         m.set_zero_point(-128);
                         x = m.conv(x, v.c * v.block * v.block, 1, 1, 0, true);
                       }
                       Node spread;
                       spread.op = Op::DepthToSpace, spread.stride = v.block, spread.inputs = {x};
                       m.keeps_scale(spread);
                       return m.finish();
                     }});
  }
  // BAM's gates: a value per channel computed as rows (a Linear of the pooled image, made an image of 1 x 1 by a
  // channel slice, as `octet import` makes rows unsqueezed) repeated over the pixels, times a conv to one channel.
  // An image of logits (a segmentation head): the output conv's int32 accumulators per pixel, channels fastest.
  uint64_t output_conv_seed = 8080;
  for (const int kernel : {1, 3})
    for (const int64_t batch : {int64_t{1}, int64_t{16}}) {
      const uint64_t s = output_conv_seed++;
      cases.push_back({"output_conv_k" + std::to_string(kernel) + "_" + shape_name(batch, 12, 7, 5), batch,
                       [s, kernel] {
                         OpModel m(s);
                         m.conv(m.input(12, 7, 5), 16, 3, 1, 1, true);
                         return m.finish_with_conv(kernel, kernel == 1 ? 5 : 9);
                       }});
    }
  // ... reading a wide (16-bit) conv output, as MobileNetV2's residual stream would.
  cases.push_back({"output_conv_wide_input_" + shape_name(4, 12, 7, 5), 4, [s = output_conv_seed++] {
                     OpModel m(s);
                     const int x = m.input(12, 7, 5);
                     m.set_bits(16);
                     m.conv(x, 16, 1, 1, 0, false);
                     m.set_bits(8);
                     return m.finish_with_conv(3, 7);
                   }});
  uint64_t bam_seed = 8070;
  for (const int64_t batch : {int64_t{1}, int64_t{16}}) {
    const uint64_t s = bam_seed++;
    cases.push_back({"bam_gates_" + shape_name(batch, 8, 6, 5), batch, [s] {
                       OpModel m(s);
                       const int x = m.input(8, 6, 5);
                       Node image, up;
                       image.op = Op::ChannelSlice, image.channels = 8;
                       image.inputs = {m.linear(m.flatten(m.global_avg_pool(x)), 8, false)};
                       up.op = Op::Upsample, up.stride = 6, up.stride_w = 5, up.inputs = {m.keeps_scale(image)};
                       m.mul(m.keeps_scale(up), m.conv(x, 1, 1, 1, 0, false));
                       return m.finish();
                     }});
  }
}

// Networks that keep some nodes in float (mixed precision; graph/float_node.h):
// a conv with its ReLU, one with a fused residual, a pool, the linear after a
// flatten, float segments (conv2 -> pool, layer3.2's two convs: float values
// between them) and the int8 nodes that read their quantized outputs. Seeded apart.
void add_mixed_precision_cases(std::vector<OpCase>& cases) {
  struct Mixed {
    const char* model;
    int channels, size;
    int64_t batch;
    std::vector<std::string> float_nodes;
    bool fused_residual;
  };
  uint64_t seed = 9100;
  for (const Mixed& v : {Mixed{"lenet5", 1, 28, 4, {"conv2", "max_pool2d_6", "fc1"}, false},
                         Mixed{"resnet20", 3, 32, 3, {"conv1", "layer1.0.conv2", "layer3.2.conv1", "layer3.2.conv2", "global_avg_pool_69"},
                               true}}) {
    const uint64_t s = seed++;
    cases.push_back({std::string("network_mixed_") + v.model + "_" + shape_name(v.batch, v.channels, v.size, v.size),
                     v.batch,
                     [v, s] {
                       QuantizeOptions options = quick_quantize_options();
                       options.float_nodes = v.float_nodes;
                       return quantize_random(random_checkpoint(v.model, ModelOptions{v.channels, v.size, v.size}, s),
                                              options, 16);
                     },
                     CaseImages::Normalised, v.fused_residual});
  }
}

std::vector<OpCase> make_cases() {
  std::vector<OpCase> cases;
  uint64_t seed = 100;

  // Convolutions: hand-picked (first layers with K = 27, 25, 75; ResNet and
  // LeNet layers; 1x1 projections; linears as 1x1 convs over 1x1 images;
  // batch 1 to 512; requantization at its extremes), then a random sample.
  std::vector<Conv> convs = {
      {1, 3, 8, 8, 16, 3, 1, 1, true, false},    {2, 1, 28, 28, 6, 5, 1, 2, true, false},
      {3, 3, 32, 32, 6, 5, 1, 0, true, false},   {4, 6, 14, 14, 16, 5, 1, 0, true, false},
      {5, 5, 9, 9, 7, 3, 2, 1, false, true},     {7, 16, 16, 16, 16, 3, 1, 1, true, true},
      {2, 16, 16, 16, 32, 3, 2, 1, true, false}, {3, 16, 15, 15, 32, 1, 2, 0, false, false},
      {2, 13, 7, 7, 130, 1, 1, 0, true, true},   {1, 7, 11, 11, 65, 5, 2, 2, true, false},
      {2, 64, 8, 8, 64, 3, 1, 1, true, true},    {1, 3, 5, 5, 3, 5, 1, 0, false, false},
      {512, 3, 8, 8, 10, 3, 1, 1, true, false},  {64, 33, 6, 6, 17, 3, 1, 2, false, true},
      {2, 2, 6, 7, 5, 3, 2, 0, true, false},     {256, 16, 8, 8, 33, 3, 2, 1, true, false},
      {9, 4, 10, 10, 24, 1, 1, 1, true, false},  {128, 32, 8, 8, 64, 3, 2, 1, false, true},
      {4, 3, 32, 32, 16, 3, 1, 1, true, false},  {2, 32, 8, 8, 64, 1, 2, 0, false, false},
      {2, 64, 4, 4, 48, 3, 1, 1, true, false},   {64, 400, 1, 1, 120, 1, 1, 0, true, false},
      {33, 84, 1, 1, 10, 1, 1, 0, false, false}, {1, 7, 1, 1, 5, 1, 1, 0, false, false},
      {5, 13, 9, 7, 17, 3, 2, 2, false, true},   {3, 5, 11, 11, 21, 5, 2, 2, true, false},
      {2, 24, 12, 12, 80, 1, 1, 0, true, true},
      {2, 16, 10, 10, 33, 3, 1, 1, true, true, Requant::Extreme},
      {1, 9, 6, 6, 70, 3, 1, 0, false, false, Requant::Extreme},
      // Too few pixels for a task per thread (a late layer at batch 1): the
      // AVX-512 kernel shares out the output channels' groups of 64 as well.
      {1, 512, 4, 4, 256, 3, 1, 1, true, true},
  };
  for (const Conv& v : sampled_convs(60)) convs.push_back(v);
  for (size_t i = 0; i < convs.size(); ++i) {
    const Conv v = convs[i];
    const uint64_t s = seed++;
    // The index keeps sampled shapes that coincide apart.
    cases.push_back({conv_name(v) + "_" + std::to_string(i), v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       const int skip = v.residual ? m.conv(x, v.out_c, v.kernel, v.stride, v.padding, false) : -1;
                       m.conv(x, v.out_c, v.kernel, v.stride, v.padding, v.relu, skip, v.requant);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  }

  // Grouped and depthwise convolutions: depthwise 3x3 and 5x5 at stride 1 and
  // 2, channel counts off multiples of 4 and 16, group counts that do not
  // divide by 4, a channel multiplier of 2, residual and ReLU epilogues.
  struct Grouped {
    int64_t batch;
    int c, h, w, out_c, kernel, stride, padding, groups;
    bool relu, residual;
    Requant requant = Requant::Typical;
  };
  const Grouped grouped[] = {
      {2, 16, 8, 8, 16, 3, 1, 1, 16, true, false},    {3, 32, 9, 9, 32, 3, 2, 1, 32, true, true},
      {2, 24, 10, 10, 24, 5, 1, 2, 24, false, true},  {1, 13, 11, 11, 13, 5, 2, 2, 13, true, false},
      {4, 3, 7, 7, 3, 3, 1, 0, 3, false, false},      {64, 32, 8, 8, 32, 3, 1, 1, 32, true, true},
      {2, 17, 6, 5, 17, 3, 2, 0, 17, false, false},   {2, 8, 6, 6, 16, 3, 1, 1, 8, true, false},
      {3, 12, 7, 7, 18, 3, 1, 1, 3, true, true},      {2, 10, 5, 5, 5, 1, 1, 0, 5, false, false},
      {2, 6, 9, 9, 14, 3, 2, 1, 2, true, false},      {1, 35, 6, 6, 21, 3, 1, 1, 7, false, true},
      {2, 20, 6, 6, 20, 3, 1, 1, 20, true, true, Requant::Extreme},
      // Groups of 4 channels in and out, 16 of them, residual and ReLU; of 2
      // (MobileFaceNet's), run 8 at a time.
      {4, 64, 12, 12, 64, 3, 1, 1, 16, true, true},   {2, 32, 10, 10, 32, 3, 1, 1, 16, true, false},
      // Depthwise 1x1 (a batch norm on its own, as DenseNet's import), and
      // 2x2, 7x7 and 9x9, which no SIMD kernel unrolls; 7x7 as ConvNeXt's (CUDA:
      // 4 output pixels a thread, rows of 9 and 14 ending in part of a thread's).
      {2, 40, 6, 6, 40, 1, 1, 0, 40, true, true},     {3, 18, 8, 8, 18, 2, 2, 0, 18, true, false},
      // Depthwise 1x1 without a residual: a table per channel on the AVX-512 path.
      {2, 40, 6, 6, 40, 1, 1, 0, 40, true, false},    {3, 70, 5, 5, 70, 1, 1, 0, 70, false, false, Requant::Extreme},
      {2, 20, 9, 9, 20, 7, 1, 3, 20, false, true},    {2, 24, 10, 10, 24, 9, 1, 4, 24, true, false},
      {3, 48, 14, 14, 48, 7, 1, 3, 48, true, false},
      // A channel multiplier of 4 in a 2x2 kernel: a depthwise transposed conv of stride 2 as its sub-pixel conv.
      {2, 12, 6, 7, 48, 2, 1, 0, 12, true, false},
  };
  for (const Grouped& v : grouped) {
    const uint64_t s = seed++;
    cases.push_back({"grouped_conv_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
                         std::to_string(v.kernel) + "s" + std::to_string(v.stride) + "p" + std::to_string(v.padding) +
                         "_g" + std::to_string(v.groups) + (v.relu ? "_relu" : "") + (v.residual ? "_residual" : "") +
                         (v.requant == Requant::Extreme ? "_extreme" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       const int skip = v.residual ? m.conv(x, v.out_c, v.kernel, v.stride, v.padding, false, -1,
                                                            Requant::Typical, v.groups)
                                                   : -1;
                       m.conv(x, v.out_c, v.kernel, v.stride, v.padding, v.relu, skip, v.requant, v.groups);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  }

  // Linear layers: on flat inputs and on flattened images with padded
  // channels (3 of 4, 1 of 4), with and without a residual.
  struct Linear {
    int64_t batch;
    int c, h, w, out_c;
    bool relu, residual;
  };
  const Linear linears[] = {
      {1, 5, 1, 1, 7, true, false},       {3, 16, 5, 5, 120, true, false}, {17, 3, 4, 4, 30, false, true},
      {512, 512, 1, 1, 10, false, false}, {64, 84, 1, 1, 84, true, true},  {2, 1, 28, 28, 33, true, false},
  };
  for (const Linear& v : linears) {
    const uint64_t s = seed++;
    cases.push_back({"linear_" + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) +
                         (v.relu ? "_relu" : "") + (v.residual ? "_residual" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       int x = m.input(v.c, v.h, v.w);
                       if (v.h * v.w > 1) x = m.flatten(x);
                       const int skip = v.residual ? m.linear(x, v.out_c, false) : -1;
                       m.linear(x, v.out_c, v.relu, skip);
                       return m.finish(10);
                     },
                     CaseImages::Int8, v.residual});
  }

  // Pools.
  struct Pool {
    int64_t batch;
    int c, h, w, kernel, stride;
  };
  const Pool pools[] = {{2, 6, 28, 28, 2, 2}, {3, 5, 9, 9, 3, 2}, {512, 16, 10, 10, 2, 2}, {1, 3, 7, 6, 3, 1}};
  for (const Pool& v : pools) {
    const std::string suffix =
        shape_name(v.batch, v.c, v.h, v.w) + "_k" + std::to_string(v.kernel) + "s" + std::to_string(v.stride);
    const uint64_t s = seed++;
    cases.push_back({"max_pool_" + suffix, v.batch, [v, s] {
                       OpModel m(s);
                       m.max_pool(m.input(v.c, v.h, v.w), v.kernel, v.stride);
                       return m.finish();
                     }});
    cases.push_back({"avg_pool_" + suffix, v.batch, [v, s] {
                       OpModel m(s);
                       m.avg_pool(m.input(v.c, v.h, v.w), v.kernel, v.stride);
                       return m.finish();
                     }});
  }
  struct Plane {
    int64_t batch;
    int c, h, w;
  };
  for (const Plane& v : {Plane{1, 16, 8, 8}, Plane{7, 13, 4, 4}, Plane{512, 64, 8, 8}, Plane{2, 3, 1, 1}}) {
    const uint64_t s = seed++;
    cases.push_back({"global_avg_pool_" + shape_name(v.batch, v.c, v.h, v.w), v.batch, [v, s] {
                       OpModel m(s);
                       m.global_avg_pool(m.input(v.c, v.h, v.w));
                       return m.finish();
                     }});
  }

  // Add (of the input and a 1x1 conv of it), ReLU, shortcut A.
  struct Add {
    int64_t batch;
    int c, h, w;
    bool relu;
  };
  for (const Add& v : {Add{1, 5, 6, 6, true}, Add{33, 16, 8, 8, false}, Add{512, 3, 4, 4, true}}) {
    const uint64_t s = seed++;
    cases.push_back({"add_" + shape_name(v.batch, v.c, v.h, v.w) + (v.relu ? "_relu" : ""), v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       m.add(x, m.conv(x, v.c, 1, 1, 0, false), v.relu);
                       return m.finish();
                     }});
  }
  for (const Plane& v : {Plane{1, 3, 5, 5}, Plane{100, 7, 3, 3}}) {
    const uint64_t s = seed++;
    cases.push_back({"relu_" + shape_name(v.batch, v.c, v.h, v.w), v.batch, [v, s] {
                       OpModel m(s);
                       m.relu(m.input(v.c, v.h, v.w));
                       return m.finish();
                     }});
  }
  struct Shortcut {
    int64_t batch;
    int c, h, w, pad;
  };
  for (const Shortcut& v :
       {Shortcut{1, 16, 32, 32, 8}, Shortcut{3, 3, 7, 7, 1}, Shortcut{512, 5, 5, 6, 2}, Shortcut{2, 32, 16, 16, 16}}) {
    const uint64_t s = seed++;
    cases.push_back(
        {"shortcut_a_" + shape_name(v.batch, v.c, v.h, v.w) + "_pad" + std::to_string(v.pad), v.batch, [v, s] {
           OpModel m(s);
           m.shortcut_a(m.input(v.c, v.h, v.w), v.pad);
           return m.finish();
         }});
  }

  struct Shuffle {
    int64_t batch;
    int c, h, w, groups;
  };
  for (const Shuffle& v : {Shuffle{2, 12, 5, 5, 3}, Shuffle{3, 58, 4, 6, 2}, Shuffle{64, 16, 2, 2, 8}, Shuffle{1, 21, 3, 3, 7}}) {
    const uint64_t s = seed++;
    cases.push_back({"channel_shuffle_" + shape_name(v.batch, v.c, v.h, v.w) + "_g" + std::to_string(v.groups), v.batch,
                     [v, s] {
                       OpModel m(s);
                       m.channel_shuffle(m.input(v.c, v.h, v.w), v.groups);
                       return m.finish();
                     }});
  }

  // Input quantization of float images (scale 4: exact half-way cases).
  struct Input {
    int64_t batch;
    int c, h, w;
    float scale;
  };
  for (const Input& v :
       {Input{1, 1, 28, 28, 4.0f}, Input{3, 3, 32, 32, 21.7f}, Input{5, 5, 3, 3, 4.0f}, Input{512, 3, 8, 8, 63.5f}}) {
    const uint64_t s = seed++;
    cases.push_back({"quantize_input_" + shape_name(v.batch, v.c, v.h, v.w), v.batch,
                     [v, s] {
                       OpModel m(s);
                       m.input(v.c, v.h, v.w, v.scale);
                       return m.finish();
                     },
                     CaseImages::Float});
  }

  // Whole networks: random weights, quantized with max and nearest rounding.
  struct Network {
    const char* model;
    int channels, size;
    int64_t batch, calibration;
    bool fused_residual;  // a ResNet's shortcuts, added in its convolutions
  };
  // (Batches stay small: the naive reference computes every image.)
  for (const Network& v : {Network{"resnet20", 3, 32, 1, 64, true}, Network{"resnet20", 3, 32, 7, 64, true},
                           Network{"resnet20", 3, 32, 48, 64, true}, Network{"resnet18", 3, 32, 3, 16, true},
                           Network{"lenet5", 1, 28, 5, 16, false}, Network{"lenet5", 3, 32, 5, 16, false}}) {
    const uint64_t s = seed++;
    cases.push_back({std::string("network_") + v.model + "_" + shape_name(v.batch, v.channels, v.size, v.size),
                     v.batch,
                     [v, s] { return random_network(v.model, ModelOptions{v.channels, v.size, v.size}, s, v.calibration); },
                     CaseImages::Normalised, v.fused_residual});
  }
  for (const int64_t batch : {1, 6}) {
    const uint64_t s = seed++;
    cases.push_back({"network_grouped_" + shape_name(batch, 3, 16, 16), batch,
                     [s] { return quantize_random(random_grouped_checkpoint(s), quick_quantize_options(), 32); },
                     CaseImages::Normalised, true});
  }
  for (const int64_t batch : {1, 5}) {
    const uint64_t s = seed++;
    cases.push_back({"network_imagenet_ops_" + shape_name(batch, 3, 16, 16), batch,
                     [s] { return quantize_random(random_imagenet_ops_checkpoint(s), quick_quantize_options(), 32); },
                     CaseImages::Normalised, false});
  }
  // Dilated convolutions, dense, depthwise and grouped: kernel 3 (one 5, one
  // 1) at dilation 2 and 3, stride 1 and 2, padding from none to more than
  // the kernel's, dilated kernels wider than the image (taps outside on both
  // sides), channel and group counts that do not divide by 4; then a small
  // network of them, quantized. (After the other cases: their seeds stay.)
  struct Dilated {
    int64_t batch;
    int c, h, w, out_c, kernel, stride, padding, dilation, groups;
    bool relu, residual;
    Requant requant = Requant::Typical;
  };
  const Dilated dilated[] = {
      {2, 16, 12, 12, 32, 3, 1, 2, 2, 1, true, false},   {3, 5, 11, 13, 17, 3, 2, 2, 2, 1, false, true},
      {2, 8, 14, 14, 24, 3, 1, 3, 3, 1, true, true},     {1, 7, 9, 9, 10, 3, 2, 1, 3, 1, false, false},
      {2, 33, 10, 10, 16, 3, 1, 0, 2, 1, true, false},   {2, 4, 5, 5, 8, 3, 1, 3, 3, 1, false, false},
      {4, 3, 7, 7, 6, 5, 1, 4, 2, 1, true, false},       {2, 8, 6, 6, 9, 1, 1, 0, 2, 1, false, false},
      {2, 16, 16, 16, 16, 3, 2, 2, 2, 1, true, true, Requant::Extreme},
      {2, 16, 10, 10, 16, 3, 1, 2, 2, 16, true, false},  {3, 13, 11, 11, 13, 3, 2, 3, 3, 13, true, true},
      {2, 18, 9, 9, 18, 3, 2, 2, 2, 18, false, false},   {2, 7, 8, 8, 7, 3, 1, 3, 3, 7, false, true},
      {2, 6, 8, 8, 12, 3, 1, 2, 2, 6, true, false},      {2, 12, 9, 9, 18, 3, 1, 2, 2, 3, true, true},
      {1, 15, 10, 10, 10, 3, 2, 3, 3, 5, false, false},
  };
  const auto add_dilated = [&](const std::string& prefix, const Dilated& v) {
    const uint64_t s = seed++;
    cases.push_back({prefix + shape_name(v.batch, v.c, v.h, v.w) + "_o" + std::to_string(v.out_c) + "_k" +
                         std::to_string(v.kernel) + "s" + std::to_string(v.stride) + "p" + std::to_string(v.padding) +
                         "d" + std::to_string(v.dilation) + "_g" + std::to_string(v.groups) +
                         (v.relu ? "_relu" : "") + (v.residual ? "_residual" : "") +
                         (v.requant == Requant::Extreme ? "_extreme" : ""),
                     v.batch, [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       const int skip = v.residual ? m.conv(x, v.out_c, v.kernel, v.stride, v.padding, false, -1,
                                                            Requant::Typical, v.groups, v.dilation)
                                                   : -1;
                       m.conv(x, v.out_c, v.kernel, v.stride, v.padding, v.relu, skip, v.requant, v.groups,
                              v.dilation);
                       return m.finish();
                     },
                     CaseImages::Int8, v.residual});
  };
  for (const Dilated& v : dilated) add_dilated("dilated_conv_", v);

  for (const int64_t batch : {1, 4}) {
    const uint64_t s = seed++;
    cases.push_back({"network_dilated_" + shape_name(batch, 3, 16, 16), batch,
                     [s] { return quantize_random(random_dilated_checkpoint(s), quick_quantize_options(), 32); },
                     CaseImages::Normalised, true});
  }
  // Depthwise convolutions in the AVX-512 kernel's blocks of 16 channels:
  // several whole ones, with and without a tail, MobileNetV2's 144 channels,
  // strides 2 and 3 (at 3 a pair starts at every column), a dilation beside
  // stride 3, kernels 4, 5 and 7, residuals. (After the other cases: their
  // seeds stay.)
  const Dilated depthwise[] = {
      {2, 48, 10, 10, 48, 3, 2, 1, 1, 48, true, true},   {3, 72, 7, 7, 72, 5, 1, 2, 1, 72, false, true},
      {2, 36, 11, 11, 36, 3, 3, 1, 1, 36, true, false},  {1, 96, 6, 6, 96, 7, 1, 3, 1, 96, true, false},
      {2, 40, 9, 9, 40, 3, 3, 2, 2, 40, false, true},    {2, 144, 5, 5, 144, 3, 1, 1, 1, 144, true, true},
      {2, 20, 8, 8, 20, 4, 2, 1, 1, 20, true, false},
  };
  for (const Dilated& v : depthwise) add_dilated("depthwise_conv_", v);
  add_image_net_operator_cases(cases);
  add_mixed_precision_cases(cases);
  add_zero_point_cases(cases);
  add_rectangular_kernel_cases(cases);
  add_wide_cases(cases);
  add_wide_many_channel_cases(cases);
  add_shared_task_cases(cases);
  add_output_cases(cases);
  add_fused_activation_cases(cases);
  add_depthwise_row_cases(cases);
  return cases;
}

}  // namespace

bool has_fused_residual(const Graph& g) {
  for (const Node& n : g.nodes)
    if (op_traits(n.op).absorbs_residual && n.inputs.size() == 2) return true;
  return false;
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = make_cases();
  return cases;
}

std::vector<float> case_images(const OpCase& c, const ActShape& s, int64_t batch, uint64_t seed) {
  if (c.images == CaseImages::Normalised) return random_images(batch, s, seed);
  std::mt19937_64 rng(seed);
  std::vector<float> out(static_cast<size_t>(batch * s.numel()));
  if (c.images == CaseImages::Int8) {
    std::uniform_int_distribution<int> value(-128, 127);
    for (float& v : out) v = static_cast<float>(value(rng));
    return out;
  }
  // Scale-4 half-way cases, values far out of range, infinities and NaN.
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::uniform_int_distribution<int> kind(0, 9), half_steps(-300, 300);
  for (float& v : out) {
    switch (kind(rng)) {
      case 0: v = (static_cast<float>(half_steps(rng)) + 0.5f) / 4.0f; break;
      case 1: v = normal(rng) * 100.0f; break;
      case 2: v = std::numeric_limits<float>::infinity() * (normal(rng) < 0 ? -1.0f : 1.0f); break;
      case 3: v = std::numeric_limits<float>::quiet_NaN(); break;
      default: v = normal(rng);
    }
  }
  return out;
}

}  // namespace octet
