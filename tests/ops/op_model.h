// Small quantized models around one operator, with random int8 weights and
// random requantization parameters, for the backend tests: every activation
// has scale 1 (unless the input is given another), so images of
// integer-valued floats in [-128, 127] are their own int8 values.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

// How a weighted layer's requantization parameters are drawn.
enum class Requant {
  Typical,  // outputs spread over the int8 range, a few channels saturating
  Extreme,  // any multiplier in [0, 2^31) and any shift in [1, 62]
};

class OpModel {
 public:
  explicit OpModel(uint64_t seed) : rng_(seed) {}

  int input(int c, int h, int w, float scale = 1.0f);
  // An input whose int8 values are then rescaled (rescaled(x, 0.5)) into zero point -128 (uint8 bytes), where
  // `as_uint8`; else input(c, h, w).
  int input(int c, int h, int w, bool as_uint8);
  // The activations made after this call (not the input's, nor those that
  // keep their input's) store a real 0 as `zero_point` (graph/node_quant.h).
  void set_zero_point(int32_t zero_point) { zero_point_ = zero_point; }
  // The activations made after this call have `bits` bits (NodeQuant::bits;
  // only a conv's output without ReLU may be wide).
  void set_bits(int32_t bits) { bits_ = bits; }
  // The activations made after this call that take the model's scale (a
  // conv's, an add's) have `scale`: what a table activation after them reads.
  void set_scale(float scale) { scale_ = scale; }
  // A conv, with a fused residual when skip >= 0.
  int conv(int x, int out_c, int kernel, int stride, int padding, bool relu, int skip = -1,
           Requant requant = Requant::Typical, int groups = 1, int dilation = 1);
  // A conv whose kernel is kernel_h x kernel_w, as conv() otherwise.
  int conv_rect(int x, int out_c, int kernel_h, int kernel_w, int stride, int padding, bool relu, int skip = -1,
                Requant requant = Requant::Typical, int groups = 1, int dilation = 1);
  int linear(int x, int out_c, bool relu, int skip = -1);
  int max_pool(int x, int kernel, int stride, int padding = 0, bool ceil_mode = false);
  int avg_pool(int x, int kernel, int stride, int padding = 0, bool ceil_mode = false, bool exclude_padding = false);
  // Windows that differ down and across (graph.h's pool_rows and pool_columns).
  int max_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode);
  int avg_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode, bool exclude_padding);
  // x's int8 values at another scale (a 1x1 average pool requantizing them):
  // the input of an operator whose int8 form reads its input's scale.
  int rescaled(int x, float scale);
  // An Activation (graph/ops/activation.h) with output scale `scale`.
  int activation_op(int x, const std::string& function, float alpha, float beta, float scale);
  int layer_norm(int x, float epsilon, float scale);
  // With `affine`, a random scale in [-1.5, 1.5] and shift in [-1, 1] per channel.
  int group_norm(int x, int groups, float epsilon, float scale, bool affine = false, bool relu = false);
  int local_response_norm(int x, int size, float alpha, float beta, float bias, float scale);
  // A PRelu with random slopes in [-0.3, 1.2], one per channel, output scale `scale`.
  int prelu(int x, float scale);
  int mul(int x, int gate);
  int concat(const std::vector<int>& inputs);
  int global_avg_pool(int x);
  int channel_mean(int x);  // of each pixel's channels, its own scale
  int channel_max(int x);   // keeps x's scale
  int channel_shuffle(int x, int groups);  // keeps x's scale
  int add(int a, int b, bool relu);
  int shortcut_a(int x, int pad);
  int relu(int x);
  int flatten(int x);
  // Any operator without parameters that keeps its input's scale (its op,
  // inputs and attributes set in `n`).
  int keeps_scale(Node n);

  // Ends with a flatten (when needed) and the output linear; validates.
  QuantizedModel finish(int classes = 4);
  // Ends with an output conv (kernel x kernel, stride 1, padding kernel / 2):
  // an image of logits, a segmentation's; validates.
  QuantizedModel finish_with_conv(int kernel, int classes);
  // Ends with one output per node of `heads`, in order: a 1x1 conv reading an image (classes + k logits per
  // pixel), a linear reading a vector; validates.
  QuantizedModel finish_with_outputs(const std::vector<int>& heads, int classes);

 private:
  int push(Node n, NodeQuant q);
  QuantizedModel model(int classes) const;  // the graph so far, validated
  int any_conv(int x, int out_c, int kernel_h, int kernel_w, int stride, int padding, bool relu, int skip,
               Requant requant, int groups, int dilation);
  ActShape shape(int node) const;
  // An output's quantization at the model's zero point and bits, at `scale` (the model's own by default).
  NodeQuant activation() const { return activation(scale_); }
  NodeQuant activation(float scale) const;
  int pool(Op op, int x, PoolAxis rows, PoolAxis columns, bool ceil_mode, NodeQuant q);
  double uniform(double lo, double hi);
  int32_t uniform_int(int32_t lo, int32_t hi);
  void set_pool_requant(NodeQuant& q, double window);
  NodeQuant weighted(const Shape& weight_shape, bool residual, bool is_output, Requant requant);

  Graph graph_;
  std::vector<NodeQuant> quant_;
  std::mt19937_64 rng_;
  float scale_ = 1.0f;
  int32_t zero_point_ = 0;
  int32_t bits_ = 8;
};

}  // namespace octet
