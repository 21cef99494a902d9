// The ONNX importer's view of pooled channels as a sequence: ECA-Net's
// channel attention pools an image to C values, reads them as a 1-D signal of
// one channel and length C ([N, 1, C]), convolves it with a small 1-D kernel
// and gates the image by the result. Its reference writes the view as
// y.squeeze(-1).transpose(-1, -2) and back as .transpose(-1, -2).unsqueeze(-1);
// timm's as y.view(N, 1, -1) and .view(N, -1, 1, 1). octet holds the sequence
// as rows of C features, and the conv along the channels as the linear layer
// it is: C x C' weights, each row the kernel's taps at its place (C^2 rather
// than kC multiplies, on a pooled value: a few hundredths of a conv layer's).
#include <algorithm>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
// What may read a sequence: the conv along it, functions of each value, and the views back to channels.
const std::set<std::string> kChannelSequenceOps = {
    "Conv", "Transpose", "Reshape", "Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Swish",
    "Tanh", "Elu", "Selu", "Celu", "Softplus", "Mish", "Identity", "Dropout"};
constexpr int64_t kLongestChannelSequence = 8192;  // 2^26 weights: 64 MiB of float32
}  // namespace

bool Importer::reads_channel_sequence(const onnx::NodeProto& n) const {
  return std::any_of(n.input().begin(), n.input().end(),
                     [&](const std::string& in) { return channel_sequences_.count(in) > 0; });
}

// Whether n is imported here: a node reading a sequence, or the Transpose
// making one of a 1-D value of length 1 ([N, C, 1]: a pooled image's last
// axis squeezed).
bool Importer::dispatch_channel_sequence(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const bool reads = reads_channel_sequence(n);
  if (reads && !kChannelSequenceOps.count(op))
    refuse(n, "reads pooled channels viewed as a sequence ([N, 1, C], ECA-Net's): octet takes only a Conv along it, "
              "functions of each value, and the Transpose or Reshape back to channels");
  const bool swaps_last_two = op == "Transpose" && ints_attribute(n, "perm", {}) == std::vector<int64_t>{0, 2, 1};
  if (op == "Transpose" && !reads && is_one_row(n, 0) && swaps_last_two && shape_of(value_node(n, 0)).w == 1) {
    define(n, builder_.flatten(activation(n, 0)));
    channel_sequences_.insert(n.output(0));
    return true;
  }
  if (!reads || op == "Reshape") return false;  // reshape() reads its target itself
  if (op == "Conv") {
    channel_conv(n);
    channel_sequences_.insert(n.output(0));
    return true;
  }
  if (op == "Transpose") {  // back to [N, C, 1]: an image of C x 1 x 1, 1-D
    if (!swaps_last_two) refuse(n, "a transpose of a [N, 1, C] sequence other than back (perm [0, 2, 1])");
    const int x = activation(n, 0);
    define(n, builder_.channel_slice(x, 0, shape_of(x).c));
    one_row_.insert(n.output(0));
    return true;
  }
  import_op(n);  // a function of each value
  channel_sequences_.insert(n.output(0));
  return true;
}

// A Conv along a sequence of C values (weight [1, 1, k]): out[o] = bias +
// sum_t w[t] in[o s - pad_begin + t d], a linear layer of C inputs.
void Importer::channel_conv(const onnx::NodeProto& n) {
  const FloatTensor w = constant(n, 1);
  const int x = value_node(n, 0);
  const int64_t length = shape_of(x).numel();
  if (length > kLongestChannelSequence)
    refuse(n, "a sequence of " + std::to_string(length) + " channels: octet's linear layer along it takes up to " +
                  std::to_string(kLongestChannelSequence) + " (C^2 weights)");
  if (w.shape.size() != 3 || w.dim(0) != 1 || w.dim(1) != 1 || int_attribute(n, "group", 1) != 1)
    refuse(n, "a weight of shape " + shape_string(w.shape) + " along pooled channels viewed as a sequence: octet "
                                                            "takes one channel in and out ([1, 1, k])");
  const auto one = [&](const char* name) {
    const std::vector<int64_t> v = ints_attribute(n, name, {1});
    if (v.size() != 1 || v[0] < 1 || v[0] > length) refuse(n, std::string(name) + " " + ints_string(v));
    return v[0];
  };
  const int64_t taps = w.dim(2), stride = one("strides"), dilation = one("dilations");
  const std::string auto_pad = string_attribute(n, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") refuse(n, "auto_pad " + auto_pad + ": give explicit pads");
  const std::vector<int64_t> pads =
      auto_pad == "VALID" ? std::vector<int64_t>{0, 0} : ints_attribute(n, "pads", {0, 0});
  if (pads.size() != 2 || pads[0] < 0 || pads[1] < 0 || pads[0] > length || pads[1] > length)
    refuse(n, "pads " + ints_string(pads) + " of a sequence of " + std::to_string(length) + " values");
  const int64_t span = length + pads[0] + pads[1] - (taps - 1) * dilation;
  if (span < 1) refuse(n, "a kernel wider than the padded sequence of " + std::to_string(length) + " values");
  const int64_t out = (span - 1) / stride + 1;
  FloatTensor weight(Shape{out, length}, 0.0f);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t i = o * stride - pads[0] + t * dilation;
      if (i >= 0 && i < length) weight.data[o * length + i] = w.data[t];
    }
  const FloatTensor bias = has_input(n, 2) ? constant(n, 2) : FloatTensor(Shape{1}, 0.0f);
  if (bias.numel() != 1) refuse(n, "a bias of shape " + shape_string(bias.shape) + " for one output channel");
  const std::string name = layer_name(n);
  define(n, builder_.linear(name, activation(n, 0), static_cast<int>(out), true));
  params_[name + ".weight"] = std::move(weight);
  params_[name + ".bias"] = FloatTensor(Shape{out}, bias.data[0]);
}

}  // namespace octet::onnx_import
