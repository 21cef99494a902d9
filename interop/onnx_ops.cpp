#include "interop/onnx_ops.h"

#include <cmath>
#include <limits>

#include "graph/ops/upsample.h"

namespace octet {

namespace {
using onnx::TensorProto;
using Writer = QdqGraphWriter;

// The float weight and bias of a conv or linear as DequantizeLinear of its
// int8 weight (per output channel, axis 0) and int32 bias (scale s_in * s_w,
// s_in as its input is stored: octet's bias re-rounded where that differs);
// those of a node kept in float as they are. With `float_bias`, the bias is
// the float its DequantizeLinear would give (the int32 times the scale, in
// float), written as a float initializer.
std::pair<std::string, std::string> dequantized_parameters(const OnnxNodeContext& c, bool float_bias = false) {
  Writer& w = c.w;
  const Node& n = c.n;
  const NodeQuant& q = c.q;
  if (q.in_float)
    return {w.initializer(n.name + ".weight", TensorProto::FLOAT, q.float_weight.shape, q.float_weight.data),
            w.initializer(n.name + ".bias", TensorProto::FLOAT, q.float_bias.shape, q.float_bias.data)};
  const int64_t out = q.weight.dim(0);
  const float input_scale = stored_scale(c.input_scale, c.input_type);
  std::vector<float> weight_step(out), bias_step(out);
  for (int64_t o = 0; o < out; ++o) {
    weight_step[o] = 1.0f / q.weight_scale.data[o];
    bias_step[o] = (1.0f / input_scale) * weight_step[o];
  }
  std::vector<int32_t> bias_values = q.bias.data;
  if (input_scale != c.input_scale)
    for (int32_t& b : bias_values)
      b = static_cast<int32_t>(std::nearbyint(static_cast<double>(b) * input_scale / c.input_scale));
  const std::string weight = w.initializer(n.name + ".weight_quantized", TensorProto::INT8, q.weight.shape, q.weight.data);
  w.initializer(n.name + ".weight_scale", TensorProto::FLOAT, {out}, weight_step);
  w.initializer(n.name + ".weight_zero_point", TensorProto::INT8, {out}, std::vector<int8_t>(out, 0));
  Writer::integer(
      w.node("DequantizeLinear", {weight, n.name + ".weight_scale", n.name + ".weight_zero_point"}, n.name + ".weight"),
      "axis", 0);
  if (float_bias) {
    std::vector<float> dequantized(out);
    for (int64_t o = 0; o < out; ++o) dequantized[o] = static_cast<float>(bias_values[o]) * bias_step[o];
    return {n.name + ".weight", w.initializer(n.name + ".bias", TensorProto::FLOAT, {out}, dequantized)};
  }
  const std::string bias = w.initializer(n.name + ".bias_quantized", TensorProto::INT32, {out}, bias_values);
  w.initializer(n.name + ".bias_scale", TensorProto::FLOAT, {out}, bias_step);
  Writer::integer(w.node("DequantizeLinear", {bias, n.name + ".bias_scale"}, n.name + ".bias"), "axis", 0);
  return {n.name + ".weight", n.name + ".bias"};
}

// A fused residual: added to a weighted node's result before its ReLU. ONNX
// Runtime fuses DQ -> Conv -> Q and DQ, DQ -> Add -> Q but nothing between a
// Conv and its Q, so for it the result is first rounded to the node's scale
// (signed, hence zero point 128), where octet rounds only the sum.
std::string with_residual(const OnnxNodeContext& c, const std::string& y) {
  if (c.inputs.size() != 2) return y;
  const std::string addend = c.target == OnnxTarget::OnnxRuntime
                                 ? c.w.qdq(y, c.q.scale, c.n.name + ".before_residual", ActivationType::Uint8Centred)
                                 : y;
  return c.w.step("Add", {addend, c.inputs[1]}, c.n.name + ".residual");
}

std::string input(const OnnxNodeContext& c) {
  const Node& n = c.n;
  set_float_value(c.w.graph()->add_input(), "input", {n.channels, n.height, n.width});
  return c.w.qdq("input", c.q.scale, n.name + ".int8", c.type);  // octet names its input node "input" too
}

// ONNX Runtime fuses DQ -> Conv -> Q, with nothing between them, into a
// QLinearConv, whose AVX2 kernel saturates its u8 x s8 pair sums: the zoo
// MobileNetV2's faithful export agreed with octet on 98.26% of the test set
// instead of 99.95%. The faithful target adds such a conv's bias after it: the
// same sum, which ORT leaves unfused (a Gemm: linear()). So too with a
// ReLU, when the output is stored unsigned (int8 zero point -128): ORT drops
// a Relu before the type's lowest zero point and would fuse the rest.
bool bias_after(const OnnxNodeContext& c) {
  return c.target == OnnxTarget::Faithful && c.inputs.size() == 1 && c.output_name.empty() &&
         (!c.n.relu || c.type == ActivationType::Int8Unsigned);
}

std::string conv2d(const OnnxNodeContext& c) {
  const Node& n = c.n;
  const auto [weight, bias] = dequantized_parameters(c);
  const std::string y = !c.output_name.empty() ? c.output_name : n.name + ".conv";  // an image of logits
  const bool separate_bias = bias_after(c);
  onnx::NodeProto* conv = separate_bias ? c.w.node("Conv", {c.inputs[0], weight}, y + "_without_bias")
                                        : c.w.node("Conv", {c.inputs[0], weight, bias}, y);
  if (separate_bias) {
    const std::string shape = c.w.initializer(n.name + ".bias_shape", onnx::TensorProto::INT64, {4},
                                              std::vector<int64_t>{1, n.channels, 1, 1});
    const std::string channel_bias = c.w.step("Reshape", {bias, shape}, n.name + ".bias_per_channel");
    c.w.step("Add", {y + "_without_bias", channel_bias}, y);
  }
  Writer::ints(conv, "kernel_shape", {n.kernel, kernel_width(n)});
  Writer::ints(conv, "strides", {n.stride, n.stride});
  Writer::ints(conv, "pads", {n.padding, n.padding, n.padding, n.padding});
  if (n.dilation != 1) Writer::ints(conv, "dilations", {n.dilation, n.dilation});
  if (n.groups != 1) Writer::integer(conv, "group", n.groups);
  return with_residual(c, y);
}

// ONNX Runtime fuses DQ, DQ -> Gemm into a QGemm with or without a Q after
// it (its output then float), and on AVX2 that saturates as QLinearConv does:
// a plain CNN's faithful export agreed with octet on 77.6% of 500 CIFAR-10
// images. The faithful target gives the Gemm a float bias (bias_after's
// separate Add would leave DQ, DQ -> Gemm to fuse), which ORT's QDQ fusion
// does not take.
std::string linear(const OnnxNodeContext& c) {
  const Node& n = c.n;
  const auto [weight, bias] = dequantized_parameters(c, c.target == OnnxTarget::Faithful);
  std::string rows = c.inputs[0];
  if (!c.input_flat) {
    rows = n.name + ".flat";
    Writer::integer(c.w.node("Flatten", {c.inputs[0]}, rows), "axis", 1);
  }
  const std::string y = !c.output_name.empty() ? c.output_name : n.name + ".gemm";
  Writer::integer(c.w.node("Gemm", {rows, weight, bias}, y), "transB", 1);
  return with_residual(c, y);
}

std::string pool(const OnnxNodeContext& c, const char* op_type) {
  const std::string y = c.n.name + ".pool";
  onnx::NodeProto* pool = c.w.node(op_type, {c.inputs[0]}, y);
  const PoolAxis rows = pool_rows(c.n), columns = pool_columns(c.n);
  const bool padded = rows.padding || columns.padding;
  Writer::ints(pool, "kernel_shape", {rows.kernel, columns.kernel});
  Writer::ints(pool, "strides", {rows.stride, columns.stride});
  if (padded) Writer::ints(pool, "pads", {rows.padding, columns.padding, rows.padding, columns.padding});
  if (c.n.ceil_mode) Writer::integer(pool, "ceil_mode", 1);
  if (c.n.op == Op::AvgPool2d && padded && !c.n.exclude_padding) Writer::integer(pool, "count_include_pad", 1);
  return y;
}

// Every second row and column, zero channels either side: exact on int8 values.
std::string shortcut_a(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  const int64_t end = std::numeric_limits<int64_t>::max(), pad = n.channels;
  w.initializer(n.name + ".starts", TensorProto::INT64, {2}, std::vector<int64_t>{0, 0});
  w.initializer(n.name + ".ends", TensorProto::INT64, {2}, std::vector<int64_t>{end, end});
  w.initializer(n.name + ".axes", TensorProto::INT64, {2}, std::vector<int64_t>{2, 3});
  w.initializer(n.name + ".steps", TensorProto::INT64, {2}, std::vector<int64_t>{2, 2});
  w.initializer(n.name + ".pads", TensorProto::INT64, {8}, std::vector<int64_t>{0, pad, 0, 0, 0, pad, 0, 0});
  w.node("Slice", {c.inputs[0], n.name + ".starts", n.name + ".ends", n.name + ".axes", n.name + ".steps"},
         n.name + ".subsampled");
  std::vector<std::string> pad_inputs = {n.name + ".subsampled", n.name + ".pads"};
  if (!c.fill.empty()) pad_inputs.push_back(c.fill);  // zero, as stored
  return w.step("Pad", pad_inputs, n.name);
}

// ShuffleNet's channel shuffle, as its exporters write it: Reshape to
// [N, g, C/g, H, W], swap the two channel axes, Reshape back. Moves values.
std::string channel_shuffle(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  const int64_t groups = n.groups, channels = c.in.c, h = c.in.h, wd = c.in.w;
  w.initializer(n.name + ".grouped_shape", TensorProto::INT64, {5},
                std::vector<int64_t>{0, groups, channels / groups, h, wd});  // 0: the batch, copied
  w.initializer(n.name + ".shape", TensorProto::INT64, {4}, std::vector<int64_t>{0, channels, h, wd});
  w.step("Reshape", {c.inputs[0], n.name + ".grouped_shape"}, n.name + ".grouped");
  Writer::ints(w.node("Transpose", {n.name + ".grouped"}, n.name + ".transposed"), "perm", {0, 2, 1, 3, 4});
  return w.step("Reshape", {n.name + ".transposed", n.name + ".shape"}, n.name);
}

// graph/ops/activation.h's functions as ONNX operators.
std::string activation(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  const std::string& f = n.function;
  const std::string y = n.name + "." + f;
  if (f == "clip") {
    w.initializer(n.name + ".min", TensorProto::FLOAT, {}, std::vector<float>{n.alpha});
    w.initializer(n.name + ".max", TensorProto::FLOAT, {}, std::vector<float>{n.beta});
    return w.step("Clip", {c.inputs[0], n.name + ".min", n.name + ".max"}, y);
  }
  if (f == "leaky_relu") {
    Writer::real(w.node("LeakyRelu", {c.inputs[0]}, y), "alpha", n.alpha);
    return y;
  }
  if (f == "sigmoid") return w.step("Sigmoid", {c.inputs[0]}, y);
  if (f == "tanh") return w.step("Tanh", {c.inputs[0]}, y);
  if (f == "softplus") return w.step("Softplus", {c.inputs[0]}, y);
  if (f == "elu" || f == "celu") {
    Writer::real(w.node(f == "elu" ? "Elu" : "Celu", {c.inputs[0]}, y), "alpha", n.alpha);
    return y;
  }
  if (f == "selu") {
    onnx::NodeProto* node = w.node("Selu", {c.inputs[0]}, y);
    Writer::real(node, "alpha", n.alpha);
    Writer::real(node, "gamma", n.beta);
    return y;
  }
  if (f == "square") return w.step("Mul", {c.inputs[0], c.inputs[0]}, y);
  if (f == "exp") return w.step("Exp", {c.inputs[0]}, y);
  if (f == "sqrt" || f == "reciprocal") {
    w.initializer(n.name + ".alpha", TensorProto::FLOAT, {}, std::vector<float>{n.alpha});
    const std::string in = f == "sqrt" ? w.step("Relu", {c.inputs[0]}, n.name + ".positive") : c.inputs[0];
    const std::string scaled = w.step("Mul", {in, n.name + ".alpha"}, n.name + ".scaled");
    if (f == "sqrt") return w.step("Sqrt", {scaled}, y);
    w.initializer(n.name + ".beta", TensorProto::FLOAT, {}, std::vector<float>{n.beta});
    return w.step("Reciprocal", {w.step("Add", {scaled, n.name + ".beta"}, n.name + ".shifted")}, y);
  }
  if (f == "mish") {  // Mish itself is opset 18: x tanh(softplus(x))
    w.step("Softplus", {c.inputs[0]}, n.name + ".softplus");
    w.step("Tanh", {n.name + ".softplus"}, n.name + ".gate");
    return w.step("Mul", {c.inputs[0], n.name + ".gate"}, y);
  }
  if (f == "hard_sigmoid") {
    onnx::NodeProto* node = w.node("HardSigmoid", {c.inputs[0]}, y);
    Writer::real(node, "alpha", n.alpha);
    Writer::real(node, "beta", n.beta);
    return y;
  }
  if (f == "gelu") {  // Gelu itself is opset 20: x (1 + erf(x / sqrt 2)) / 2, as torch exports it
    w.initializer(n.name + ".root2", TensorProto::FLOAT, {}, std::vector<float>{1.41421356f});
    w.initializer(n.name + ".one", TensorProto::FLOAT, {}, std::vector<float>{1.0f});
    w.initializer(n.name + ".half", TensorProto::FLOAT, {}, std::vector<float>{0.5f});
    w.step("Div", {c.inputs[0], n.name + ".root2"}, n.name + ".scaled");
    w.step("Erf", {n.name + ".scaled"}, n.name + ".erf");
    w.step("Add", {n.name + ".erf", n.name + ".one"}, n.name + ".gate");
    w.step("Mul", {c.inputs[0], n.name + ".gate"}, n.name + ".product");
    return w.step("Mul", {n.name + ".product", n.name + ".half"}, y);
  }
  if (f == "hard_swish") {  // HardSwish itself is opset 14, and the export writes 13
    onnx::NodeProto* gate = w.node("HardSigmoid", {c.inputs[0]}, n.name + ".gate");
    Writer::real(gate, "alpha", 1.0f / 6.0f);
    Writer::real(gate, "beta", 0.5f);
  } else {  // silu
    w.step("Sigmoid", {c.inputs[0]}, n.name + ".gate");
  }
  return w.step("Mul", {c.inputs[0], n.name + ".gate"}, y);
}

// A slope per channel, broadcast over C x H x W (or over F of a flat vector).
std::string prelu(const OnnxNodeContext& c) {
  const FloatTensor& slope = c.q.slope;
  const Shape shape = c.input_flat ? Shape{slope.numel()} : Shape{slope.numel(), 1, 1};
  const std::string slopes = c.w.initializer(c.n.name + ".slope", TensorProto::FLOAT, shape, slope.data);
  return c.w.step("PRelu", {c.inputs[0], slopes}, c.n.name + ".prelu");
}

// ONNX's own LRN, whose window octet's is (graph/ops/local_response_norm.cpp).
std::string local_response_norm(const OnnxNodeContext& c) {
  const Node& n = c.n;
  onnx::NodeProto* lrn = c.w.node("LRN", {c.inputs[0]}, n.name + ".lrn");
  Writer::integer(lrn, "size", n.kernel);
  Writer::real(lrn, "alpha", n.alpha);
  Writer::real(lrn, "beta", n.beta);
  Writer::real(lrn, "bias", n.epsilon);
  return n.name + ".lrn";
}

// Channels [offset, offset + channels): exact on int8 values. Of rows (N x F:
// the importer reads rows as a 1 x 1 image so), made N x C x 1 x 1.
std::string channel_slice(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  w.initializer(n.name + ".starts", TensorProto::INT64, {1}, std::vector<int64_t>{n.offset});
  w.initializer(n.name + ".ends", TensorProto::INT64, {1}, std::vector<int64_t>{int64_t{n.offset} + n.channels});
  w.initializer(n.name + ".axes", TensorProto::INT64, {1}, std::vector<int64_t>{1});
  const std::string y = w.step("Slice", {c.inputs[0], n.name + ".starts", n.name + ".ends", n.name + ".axes"},
                               c.input_flat ? n.name + ".rows" : n.name);
  if (!c.input_flat) return y;
  w.initializer(n.name + ".image_axes", TensorProto::INT64, {2}, std::vector<int64_t>{2, 3});
  return w.step("Unsqueeze", {y, n.name + ".image_axes"}, n.name);
}

// Over channels (axis 1) as torch exports LayerNorm at opset 13 (LayerNormalization is 17).
std::string layer_norm(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  const std::string& x = c.inputs[0];
  w.initializer(n.name + ".two", TensorProto::FLOAT, {}, std::vector<float>{2.0f});
  w.initializer(n.name + ".epsilon", TensorProto::FLOAT, {}, std::vector<float>{n.epsilon});
  Writer::ints(w.node("ReduceMean", {x}, n.name + ".mean"), "axes", {1});
  w.step("Sub", {x, n.name + ".mean"}, n.name + ".centered");
  w.step("Pow", {n.name + ".centered", n.name + ".two"}, n.name + ".squares");
  Writer::ints(w.node("ReduceMean", {n.name + ".squares"}, n.name + ".variance"), "axes", {1});
  w.step("Add", {n.name + ".variance", n.name + ".epsilon"}, n.name + ".guarded");
  w.step("Sqrt", {n.name + ".guarded"}, n.name + ".deviation");
  return w.step("Div", {n.name + ".centered", n.name + ".deviation"}, n.name + ".normalised");
}

// As torch exports GroupNorm: a view of [N, groups, -1], InstanceNormalization
// (scale 1, shift 0), viewed back as the image, then its affine as a Mul and an Add.
std::string group_norm(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  w.initializer(n.name + ".grouped", TensorProto::INT64, {3}, std::vector<int64_t>{0, n.groups, -1});
  w.initializer(n.name + ".image", TensorProto::INT64, {4}, std::vector<int64_t>{0, c.in.c, c.in.h, c.in.w});
  w.initializer(n.name + ".ones", TensorProto::FLOAT, {n.groups}, std::vector<float>(size_t(n.groups), 1.0f));
  w.initializer(n.name + ".zeros", TensorProto::FLOAT, {n.groups}, std::vector<float>(size_t(n.groups), 0.0f));
  w.step("Reshape", {c.inputs[0], n.name + ".grouped"}, n.name + ".groups");
  Writer::real(w.node("InstanceNormalization", {n.name + ".groups", n.name + ".ones", n.name + ".zeros"},
                      n.name + ".normalised_groups"),
               "epsilon", n.epsilon);
  const std::string y = w.step("Reshape", {n.name + ".normalised_groups", n.name + ".image"}, n.name + ".normalised");
  if (!n.bias) return y;
  const Shape per_channel = {c.in.c, 1, 1};
  w.initializer(n.name + ".norm_scale", TensorProto::FLOAT, per_channel, c.q.norm_scale.data);
  w.initializer(n.name + ".norm_shift", TensorProto::FLOAT, per_channel, c.q.norm_shift.data);
  w.step("Mul", {y, n.name + ".norm_scale"}, n.name + ".scaled");
  return w.step("Add", {n.name + ".scaled", n.name + ".norm_shift"}, n.name + ".shifted");
}

// Over each pixel's channels, keeping the axis (opset 13: the axes an attribute).
std::string channel_reduction(const OnnxNodeContext& c, const char* op) {
  onnx::NodeProto* node = c.w.node(op, {c.inputs[0]}, c.n.name + ".reduced");
  Writer::ints(node, "axes", {1});
  Writer::integer(node, "keepdims", 1);
  return c.n.name + ".reduced";
}

// Zero rows and columns on each side: exact on int8 values.
std::string pad2d(const OnnxNodeContext& c) {
  const Node& n = c.n;
  c.w.initializer(n.name + ".pads", TensorProto::INT64, {8},
                  std::vector<int64_t>{0, 0, n.pad_top, n.pad_left, 0, 0, n.pad_bottom, n.pad_right});
  std::vector<std::string> inputs = {c.inputs[0], n.name + ".pads"};
  if (!c.fill.empty()) inputs.push_back(c.fill);  // zero, as stored
  return c.w.step("Pad", inputs, n.name);
}

// pixel_shuffle's order (DepthToSpace mode CRD) as Reshape [N, C, b, b, H, W], Transpose, Reshape: ONNX
// Runtime moves int8 and uint8 values through these (its DepthToSpace takes neither). Moves values.
std::string depth_to_space(const OnnxNodeContext& c) {
  Writer& w = c.w;
  const Node& n = c.n;
  const int64_t block = n.stride, channels = c.in.c / (block * block), h = c.in.h, wd = c.in.w;
  w.initializer(n.name + ".blocks_shape", TensorProto::INT64, {6},
                std::vector<int64_t>{0, channels, block, block, h, wd});  // 0: the batch, copied
  w.initializer(n.name + ".shape", TensorProto::INT64, {4}, std::vector<int64_t>{0, channels, h * block, wd * block});
  w.step("Reshape", {c.inputs[0], n.name + ".blocks_shape"}, n.name + ".blocks");
  Writer::ints(w.node("Transpose", {n.name + ".blocks"}, n.name + ".transposed"), "perm", {0, 1, 4, 2, 5, 3});
  return w.step("Reshape", {n.name + ".transposed", n.name + ".shape"}, n.name);
}

// The float scale of Resize that resizes `in` pixels to `out`: out / in, or just above it where float rounds it down
// (ONNX Runtime's output size is floor(in x scale)).
float resize_scale(int in, int out) {
  float scale = static_cast<float>(double(out) / in);
  while (static_cast<int64_t>(float(in) * scale) < out) scale = std::nextafter(scale, 2.0f * scale);
  return scale;
}

// Bilinear by whole factors or to a size, as F.interpolate(mode="bilinear", align_corners=False), or True.
std::string upsample_bilinear(const OnnxNodeContext& c) {
  const Node& n = c.n;
  const float down = n.height ? resize_scale(c.in.h, n.height) : static_cast<float>(n.stride);
  const float across = n.width ? resize_scale(c.in.w, n.width) : static_cast<float>(upsample_across(n));
  c.w.initializer(n.name + ".scales", TensorProto::FLOAT, {4}, std::vector<float>{1, 1, down, across});
  const std::string y = n.name + ".resize";  // a float result, quantized after
  onnx::NodeProto* node = c.w.node("Resize", {c.inputs[0], "", n.name + ".scales"}, y);
  Writer::text(node, "mode", "linear");
  Writer::text(node, "coordinate_transformation_mode", n.align_corners ? "align_corners" : "half_pixel");
  return y;
}

// Nearest-neighbour by whole factors: Resize's pixel o reads floor(o / factor), as torch's nn.Upsample. To a
// size: a Gather of the rows, then of the columns, each output pixel's input pixel named exactly (a Resize would
// compute floor(o / scale) in float, a pixel off where o x in / out is whole and the scale rounds up).
std::string upsample(const OnnxNodeContext& c) {
  const Node& n = c.n;
  if (n.height) {
    const auto sources = [](int in, int out) {
      std::vector<int64_t> s;
      for (int o = 0; o < out; ++o) s.push_back(ops::nearest_source(o, in, out));
      return s;
    };
    c.w.initializer(n.name + ".rows", TensorProto::INT64, {n.height}, sources(c.in.h, n.height));
    c.w.initializer(n.name + ".columns", TensorProto::INT64, {n.width}, sources(c.in.w, n.width));
    Writer::integer(c.w.node("Gather", {c.inputs[0], n.name + ".rows"}, n.name + ".gathered_rows"), "axis", 2);
    Writer::integer(c.w.node("Gather", {n.name + ".gathered_rows", n.name + ".columns"}, n.name), "axis", 3);
    return n.name;
  }
  c.w.initializer(n.name + ".scales", TensorProto::FLOAT, {4},
                  std::vector<float>{1, 1, static_cast<float>(n.stride), static_cast<float>(upsample_across(n))});
  onnx::NodeProto* node = c.w.node("Resize", {c.inputs[0], "", n.name + ".scales"}, n.name);
  Writer::text(node, "mode", "nearest");
  Writer::text(node, "coordinate_transformation_mode", "asymmetric");
  Writer::text(node, "nearest_mode", "floor");
  return n.name;
}

const OnnxOp kOps[] = {
    {Op::Input, input, true, false},
    {Op::Conv2d, conv2d, false, false},
    {Op::Linear, linear, false, true},
    {Op::ReLU, [](const OnnxNodeContext& c) { return c.w.step("Relu", {c.inputs[0]}, c.n.name + ".relu"); }, false,
     false},
    {Op::MaxPool2d, [](const OnnxNodeContext& c) { return pool(c, "MaxPool"); }, false, false},
    {Op::AvgPool2d, [](const OnnxNodeContext& c) { return pool(c, "AveragePool"); }, false, false},
    {Op::GlobalAvgPool,
     [](const OnnxNodeContext& c) { return c.w.step("GlobalAveragePool", {c.inputs[0]}, c.n.name + ".pool"); }, false,
     false},
    {Op::Add, [](const OnnxNodeContext& c) { return c.w.step("Add", {c.inputs[0], c.inputs[1]}, c.n.name + ".add"); },
     false, false},
    // No arithmetic: the same int8 values in C, H, W order.
    {Op::Flatten,
     [](const OnnxNodeContext& c) {
       Writer::integer(c.w.node("Flatten", {c.inputs[0]}, c.n.name), "axis", 1);
       return c.n.name;
     },
     false, true},
    {Op::ShortcutA, shortcut_a, false, false},
    {Op::ChannelShuffle, channel_shuffle, false, false},
    {Op::Activation, activation, false, false},
    {Op::Mul, [](const OnnxNodeContext& c) { return c.w.step("Mul", {c.inputs[0], c.inputs[1]}, c.n.name + ".mul"); },
     false, false},
    {Op::Concat,
     [](const OnnxNodeContext& c) {
       Writer::integer(c.w.node("Concat", c.inputs, c.n.name + ".concat"), "axis", 1);
       return c.n.name + ".concat";
     },
     false, false},
    {Op::ChannelSlice, channel_slice, false, false},
    {Op::Pad2d, pad2d, false, false},
    {Op::Upsample, upsample, false, false},
    {Op::UpsampleBilinear, upsample_bilinear, false, false},
    {Op::DepthToSpace, depth_to_space, false, false},
    {Op::LayerNorm, layer_norm, false, false},
    {Op::PRelu, prelu, false, false},
    {Op::LocalResponseNorm, local_response_norm, false, false},
    {Op::GroupNorm, group_norm, false, false},
    {Op::ChannelMean, [](const OnnxNodeContext& c) { return channel_reduction(c, "ReduceMean"); }, false, false},
    {Op::ChannelMax, [](const OnnxNodeContext& c) { return channel_reduction(c, "ReduceMax"); }, false, false},
};
}  // namespace

const OnnxOp* onnx_op(Op op) {
  for (const OnnxOp& o : kOps)
    if (o.op == op) return &o;
  return nullptr;
}

bool onnx_exports(Op op) { return onnx_op(op) != nullptr; }

}  // namespace octet
