#include "tests/ops/op_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "graph/ops/pool2d.h"

namespace octet {

namespace {
// gain * 2^shift as a valid multiplier (clamped below 2^31).
int32_t fixed(double gain, int32_t shift) {
  return static_cast<int32_t>(std::min(std::round(std::ldexp(gain, shift)), 2147483647.0));
}
}  // namespace

int OpModel::input(int c, int h, int w, float scale) {
  scale_ = scale;
  Node n;
  n.op = Op::Input;
  n.channels = c, n.height = h, n.width = w;
  NodeQuant q = activation();
  q.zero_point = 0;
  return push(n, q);
}

int OpModel::input(int c, int h, int w, bool as_uint8) {
  const int x = input(c, h, w);
  if (!as_uint8) return x;
  set_zero_point(-128);
  const int rescaled_x = rescaled(x, 0.5f);
  set_zero_point(0);
  return rescaled_x;
}

int OpModel::conv(int x, int out_c, int kernel, int stride, int padding, bool relu, int skip, Requant requant,
                  int groups, int dilation) {
  return any_conv(x, out_c, kernel, kernel, stride, padding, relu, skip, requant, groups, dilation);
}

int OpModel::conv_rect(int x, int out_c, int kernel_h, int kernel_w, int stride, int padding, bool relu, int skip,
                       Requant requant, int groups, int dilation) {
  return any_conv(x, out_c, kernel_h, kernel_w, stride, padding, relu, skip, requant, groups, dilation);
}

int OpModel::any_conv(int x, int out_c, int kernel_h, int kernel_w, int stride, int padding, bool relu, int skip,
                      Requant requant, int groups, int dilation) {
  Node n;
  n.op = Op::Conv2d;
  n.inputs = {x};
  if (skip >= 0) n.inputs.push_back(skip);
  n.channels = out_c, n.kernel = kernel_h, n.stride = stride, n.padding = padding, n.groups = groups;
  if (kernel_w != kernel_h) n.kernel_w = kernel_w;
  n.dilation = dilation;
  n.bias = true, n.relu = relu;
  const int64_t in_c = shape(x).c;
  NodeQuant q = weighted({out_c, in_c / groups, kernel_h, kernel_w}, skip >= 0, false, requant);
  if (requant == Requant::Typical) {
    // A wide input, residual or output spans 2^(bits - 8) times int8's values: the same real gains, the
    // multipliers rescaled and a wide output's shift 8 or more lower, so they stay below 2^31.
    const auto span = [](int32_t bits) { return double(highest_output(bits)) / 127.0; };
    const int32_t lower = q.bits - 8;
    const auto rescale = [&](int32_t& m, int from) {
      m = static_cast<int32_t>(std::round(m * span(q.bits) / span(quant_[from].bits) / double(1 << lower)));
    };
    for (int32_t& m : q.multiplier.data) rescale(m, x);
    if (skip >= 0)
      for (int32_t& m : q.skip_multiplier.data) rescale(m, skip);
    for (int32_t& s : q.shift.data) s -= lower;
  }
  return push(n, q);
}

int OpModel::linear(int x, int out_c, bool relu, int skip) {
  Node n;
  n.op = Op::Linear;
  n.inputs = {x};
  if (skip >= 0) n.inputs.push_back(skip);
  n.channels = out_c, n.bias = true, n.relu = relu;
  return push(n, weighted({out_c, shape(x).numel()}, skip >= 0, false, Requant::Typical));
}

int OpModel::max_pool(int x, int kernel, int stride, int padding, bool ceil_mode) {
  return max_pool(x, {kernel, stride, padding}, {kernel, stride, padding}, ceil_mode);
}

int OpModel::avg_pool(int x, int kernel, int stride, int padding, bool ceil_mode, bool exclude_padding) {
  return avg_pool(x, {kernel, stride, padding}, {kernel, stride, padding}, ceil_mode, exclude_padding);
}

int OpModel::max_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode) {
  NodeQuant q = activation();
  q.scale = quant_[x].scale;
  q.zero_point = quant_[x].zero_point;
  return pool(Op::MaxPool2d, x, rows, columns, ceil_mode, q);
}

int OpModel::avg_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode, bool exclude_padding) {
  NodeQuant q = activation();
  set_pool_requant(q, double(rows.kernel) * columns.kernel);
  const int node = pool(Op::AvgPool2d, x, rows, columns, ceil_mode, q);
  graph_.nodes[node].exclude_padding = exclude_padding;
  const int64_t counts = ops::avg_pool_multiplier_count(graph_.nodes[node], shape(x), shape(node));
  if (counts > 1) {  // one multiplier per window count, sharing the shift
    std::vector<int32_t> by_count;
    for (int64_t c = 1; c <= counts; ++c)
      by_count.push_back(fixed(uniform(0.5, 2.0) * 64.0 / (74.0 * std::sqrt(double(c))), quant_[node].shift.data[0]));
    quant_[node].multiplier = Int32Tensor({counts}, by_count);
  }
  return node;
}

int OpModel::rescaled(int x, float scale) {
  NodeQuant q = activation(scale);
  set_pool_requant(q, 1.0);
  return pool(Op::AvgPool2d, x, {}, {}, false, q);
}

int OpModel::activation_op(int x, const std::string& function, float alpha, float beta, float scale) {
  Node n;
  n.op = Op::Activation;
  n.inputs = {x};
  n.function = function, n.alpha = alpha, n.beta = beta;
  return push(n, activation(scale));
}

int OpModel::local_response_norm(int x, int size, float alpha, float beta, float bias, float scale) {
  Node n;
  n.op = Op::LocalResponseNorm;
  n.inputs = {x};
  n.kernel = size, n.alpha = alpha, n.beta = beta, n.epsilon = bias;
  return push(n, activation(scale));
}

int OpModel::layer_norm(int x, float epsilon, float scale) {
  Node n;
  n.op = Op::LayerNorm;
  n.inputs = {x};
  n.epsilon = epsilon;
  return push(n, activation(scale));
}

int OpModel::group_norm(int x, int groups, float epsilon, float scale, bool affine, bool relu) {
  Node n;
  n.op = Op::GroupNorm;
  n.inputs = {x};
  n.groups = groups, n.epsilon = epsilon, n.bias = affine, n.relu = relu;
  NodeQuant q = activation(scale);
  if (affine) {
    const int64_t channels = shape(x).c;
    q.norm_scale = FloatTensor({channels}), q.norm_shift = FloatTensor({channels});
    for (float& g : q.norm_scale.data) g = static_cast<float>(uniform(-1.5, 1.5));
    for (float& b : q.norm_shift.data) b = static_cast<float>(uniform(-1.0, 1.0));
  }
  return push(n, q);
}

int OpModel::prelu(int x, float scale) {
  Node n;
  n.op = Op::PRelu;
  n.inputs = {x};
  NodeQuant q = activation(scale);
  const int64_t channels = shape(x).c;
  q.slope = FloatTensor({channels});
  for (float& s : q.slope.data) s = static_cast<float>(uniform(-0.3, 1.2));
  return push(n, q);
}

// The product of two int8 values (about +-74^2 apart from saturation) mapped to about +-64.
int OpModel::mul(int x, int gate) {
  Node n;
  n.op = Op::Mul;
  n.inputs = {x, gate};
  NodeQuant q = activation();
  const int32_t shift = uniform_int(26, 34);
  q.multiplier = Int32Tensor({1}, std::vector<int32_t>{fixed(uniform(0.5, 2.0) * 64.0 / (74.0 * 74.0), shift)});
  q.shift = Int32Tensor({1}, std::vector<int32_t>{shift});
  return push(n, q);
}

int OpModel::concat(const std::vector<int>& inputs) {
  Node n;
  n.op = Op::Concat;
  n.inputs = inputs;
  NodeQuant q = activation();
  const int32_t shift = uniform_int(26, 30);
  std::vector<int32_t> multipliers;
  for (size_t i = 0; i < inputs.size(); ++i) multipliers.push_back(fixed(uniform(0.1, 1.5), shift));
  q.multiplier = Int32Tensor({static_cast<int64_t>(inputs.size())}, multipliers);
  q.shift = Int32Tensor({1}, std::vector<int32_t>{shift});
  return push(n, q);
}

int OpModel::global_avg_pool(int x) {
  Node n;
  n.op = Op::GlobalAvgPool;
  n.inputs = {x};
  NodeQuant q = activation();
  set_pool_requant(q, double(shape(x).h) * shape(x).w);
  return push(n, q);
}

int OpModel::channel_mean(int x) {
  Node n;
  n.op = Op::ChannelMean;
  n.inputs = {x};
  NodeQuant q = activation();
  set_pool_requant(q, double(shape(x).c));
  return push(n, q);
}

int OpModel::channel_max(int x) {
  Node n;
  n.op = Op::ChannelMax;
  n.inputs = {x};
  return keeps_scale(n);
}

int OpModel::add(int a, int b, bool relu) {
  Node n;
  n.op = Op::Add;
  n.inputs = {a, b};
  n.relu = relu;
  NodeQuant q = activation();
  const int32_t shift = uniform_int(26, 30);
  q.multiplier =
      Int32Tensor({2}, std::vector<int32_t>{fixed(uniform(0.1, 1.5), shift), fixed(uniform(0.1, 1.5), shift)});
  q.shift = Int32Tensor({1}, std::vector<int32_t>{shift});
  return push(n, q);
}

int OpModel::shortcut_a(int x, int pad) {
  Node n;
  n.op = Op::ShortcutA;
  n.inputs = {x};
  n.channels = pad;
  return keeps_scale(n);
}

int OpModel::relu(int x) {
  Node n;
  n.op = Op::ReLU;
  n.inputs = {x};
  return keeps_scale(n);
}

int OpModel::flatten(int x) {
  Node n;
  n.op = Op::Flatten;
  n.inputs = {x};
  return keeps_scale(n);
}

int OpModel::channel_shuffle(int x, int groups) {
  Node n;
  n.op = Op::ChannelShuffle, n.inputs = {x}, n.groups = groups;
  return keeps_scale(std::move(n));
}

int OpModel::keeps_scale(Node n) {
  NodeQuant q = activation();
  q.scale = quant_[n.inputs.at(0)].scale;
  q.zero_point = quant_[n.inputs.at(0)].zero_point;
  q.amax = 127.0f / q.scale;
  return push(std::move(n), q);
}

QuantizedModel OpModel::finish(int classes) {
  int x = static_cast<int>(graph_.nodes.size()) - 1;
  if (shape(x).h * shape(x).w > 1) x = flatten(x);
  Node n;
  n.op = Op::Linear;
  n.inputs = {x};
  n.channels = classes, n.bias = true;
  push(n, weighted({classes, shape(x).numel()}, false, true, Requant::Typical));
  return model(classes);
}

QuantizedModel OpModel::finish_with_conv(int kernel, int classes) {
  Node n;
  n.op = Op::Conv2d;
  n.inputs = {static_cast<int>(graph_.nodes.size()) - 1};
  n.channels = classes, n.kernel = kernel, n.padding = kernel / 2, n.bias = true;
  push(n, weighted({classes, shape(n.inputs[0]).c, kernel, kernel}, false, true, Requant::Typical));
  return model(classes);
}

QuantizedModel OpModel::finish_with_outputs(const std::vector<int>& heads, int classes) {
  int last_classes = classes;
  for (size_t k = 0; k < heads.size(); ++k) {
    const ActShape s = shape(heads[k]);
    Node n;
    n.op = s.h * s.w > 1 ? Op::Conv2d : Op::Linear;
    n.inputs = {heads[k]};
    n.channels = last_classes = classes + static_cast<int>(k), n.bias = true;
    if (n.op == Op::Conv2d) n.kernel = 1;
    const Shape weight = n.op == Op::Conv2d ? Shape{n.channels, s.c, 1, 1} : Shape{n.channels, s.c};
    push(n, weighted(weight, false, true, Requant::Typical));
  }
  graph_.output_count = static_cast<int>(heads.size());
  return model(last_classes);
}

QuantizedModel OpModel::model(int classes) const {
  QuantizedModel m;
  m.graph = graph_;
  m.quant = quant_;
  m.model = "op-test";
  m.source = {"op-test", std::string(64, '0'), std::string(64, '0')};  // no checkpoint behind it
  m.dataset = "random";
  for (int c = 0; c < classes; ++c) m.classes.push_back("class" + std::to_string(c));
  m.mean.assign(graph_.nodes[0].channels, 0.0f);
  m.std.assign(graph_.nodes[0].channels, 1.0f);
  m.validate("op test model");
  return m;
}

int OpModel::push(Node n, NodeQuant q) {
  n.name = std::string(op_name(n.op)) + "_" + std::to_string(graph_.nodes.size());
  graph_.nodes.push_back(n);
  quant_.push_back(std::move(q));
  return static_cast<int>(graph_.nodes.size()) - 1;
}

ActShape OpModel::shape(int node) const { return graph_.shapes()[node]; }

NodeQuant OpModel::activation(float scale) const {
  NodeQuant q;
  q.scale = scale;
  q.amax = 127.0f / scale;
  q.method = "test";
  q.zero_point = zero_point_;
  q.bits = bits_;
  return q;
}

int OpModel::pool(Op op, int x, PoolAxis rows, PoolAxis columns, bool ceil_mode, NodeQuant q) {
  Node n;
  n.op = op;
  n.inputs = {x};
  set_pool_window(n, rows, columns, ceil_mode);
  return push(n, q);
}

double OpModel::uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
int32_t OpModel::uniform_int(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng_); }

// A window of `window` int8 values sums to about +-74 sqrt(window); map that to about +-64.
void OpModel::set_pool_requant(NodeQuant& q, double window) {
  const int32_t shift = uniform_int(20, 30);
  q.multiplier =
      Int32Tensor({1}, std::vector<int32_t>{fixed(uniform(0.5, 2.0) * 64.0 / (74.0 * std::sqrt(window)), shift)});
  q.shift = Int32Tensor({1}, std::vector<int32_t>{shift});
}

// Random int8 weights and int32 biases. Typical requantization: per channel a
// random shift and gains that spread the outputs over the int8 range (a dot
// product of K random int8 pairs has a standard deviation near 74^2 sqrt(K)).
NodeQuant OpModel::weighted(const Shape& weight_shape, bool residual, bool is_output, Requant requant) {
  NodeQuant q = activation();
  const int64_t out_c = weight_shape[0];
  const double depth = double(shape_numel(weight_shape) / out_c);
  const double spread = 74.0 * 74.0 * std::sqrt(depth);
  q.weight = Int8Tensor(weight_shape);
  for (int8_t& w : q.weight.data) w = static_cast<int8_t>(uniform_int(-128, 127));
  q.weight_scale = FloatTensor({out_c}, 1.0f);
  q.bias = Int32Tensor({out_c});
  for (int32_t& b : q.bias.data) b = static_cast<int32_t>(std::round(uniform(-spread, spread)));
  if (is_output) {
    q.scale = 0;
    q.zero_point = 0;
    q.logit_scale = FloatTensor({out_c}, 1.0f);
    return q;
  }
  q.multiplier = Int32Tensor({out_c});
  q.shift = Int32Tensor({out_c});
  if (residual) q.skip_multiplier = Int32Tensor({out_c});
  for (int64_t o = 0; o < out_c; ++o) {
    if (requant == Requant::Extreme) {
      q.shift.data[o] = uniform_int(1, 62);
      q.multiplier.data[o] = uniform_int(0, 2147483647);
      const int64_t skip_bound = std::min<int64_t>(2147483647, int64_t{1} << std::min(q.shift.data[o], 40));
      if (residual) q.skip_multiplier.data[o] = static_cast<int32_t>(uniform(0.0, double(skip_bound)));
      continue;
    }
    q.shift.data[o] = uniform_int(20, 30);
    q.multiplier.data[o] = fixed(uniform(0.2, 2.0) * 64.0 / spread, q.shift.data[o]);
    if (residual) q.skip_multiplier.data[o] = fixed(uniform(0.0, 1.0), q.shift.data[o]);
  }
  return q;
}

}  // namespace octet
