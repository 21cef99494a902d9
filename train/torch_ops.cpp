#include "train/torch_ops.h"

#include <cmath>
#include <stdexcept>

namespace octet {

namespace {
using torch::indexing::None;
using torch::indexing::Slice;
using Inputs = std::vector<torch::Tensor>;

bool is_weight(const ParamShape& p) { return std::string(p.suffix) == ".weight"; }

// A bias as torch's layers make it: uniform in +-1/sqrt(fan-in).
torch::Tensor default_bias(const ParamShape& p, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return torch::empty(p.shape).uniform_(-bound, bound);
}

// Convs: He et al.'s normal init (as the CIFAR ResNet code does).
torch::Tensor init_conv(const Node& n, const std::vector<ActShape>& in, const ParamShape& p) {
  if (is_weight(p)) return torch::nn::init::kaiming_normal_(torch::empty(p.shape), 0.0, torch::kFanIn, torch::kReLU);
  return default_bias(p, int64_t{in[0].c / n.groups} * n.kernel * kernel_width(n));
}

// Linears: torch's default.
torch::Tensor init_linear(const Node&, const std::vector<ActShape>& in, const ParamShape& p) {
  if (is_weight(p)) return torch::nn::init::kaiming_uniform_(torch::empty(p.shape), std::sqrt(5.0));
  return default_bias(p, in[0].c);
}

torch::Tensor init_batch_norm(const Node&, const std::vector<ActShape>&, const ParamShape& p) {
  const std::string s = p.suffix;
  return s == ".weight" || s == ".running_var" ? torch::ones(p.shape) : torch::zeros(p.shape);
}

// graph/ops/activation.h's functions, as torch computes them.
torch::Tensor activation(const Node& n, const torch::Tensor& x) {
  const std::string& f = n.function;
  if (f == "clip") return torch::clamp(x, n.alpha, n.beta);
  if (f == "leaky_relu") return torch::leaky_relu(x, n.alpha);
  if (f == "sigmoid") return torch::sigmoid(x);
  if (f == "hard_sigmoid") return torch::clamp(x * n.alpha + n.beta, 0, 1);
  if (f == "hard_swish") return torch::hardswish(x);
  if (f == "silu") return torch::silu(x);
  if (f == "gelu") return torch::gelu(x);
  if (f == "tanh") return torch::tanh(x);
  if (f == "elu") return torch::elu(x, n.alpha);
  if (f == "selu") return n.beta * torch::elu(x, n.alpha);
  if (f == "celu") return torch::celu(x, n.alpha);
  if (f == "softplus") return torch::softplus(x);
  if (f == "mish") return torch::mish(x);
  if (f == "square") return x * x;
  if (f == "sqrt") return torch::sqrt(torch::relu(x) * n.alpha);
  if (f == "reciprocal") return torch::reciprocal(x * n.alpha + n.beta);
  if (f == "exp") return torch::exp(x);
  throw std::invalid_argument("unknown activation function '" + f + "'");
}

const TorchOp kOps[] = {
    {Op::Input, nullptr, [](const Node&, const Inputs& x, const TorchParams&, bool) { return x[0]; }},
    {Op::Conv2d, init_conv,
     [](const Node& n, const Inputs& x, const TorchParams& t, bool) {
       return torch::conv2d(x[0], t.weight, t.bias, n.stride, n.padding, n.dilation, n.groups);
     }},
    {Op::BatchNorm2d, init_batch_norm,
     [](const Node&, const Inputs& x, const TorchParams& t, bool training) {
       return torch::batch_norm(x[0], t.weight, t.bias, t.running_mean, t.running_var, training, 0.1, 1e-5,
                                /*cudnn_enabled=*/true);
     }},
    // A flat vector of F features is F x 1 x 1 in octet's graph (graph.h); in torch, [N, F].
    {Op::Linear, init_linear,
     [](const Node&, const Inputs& x, const TorchParams& t, bool) {
       return torch::linear(x[0].flatten(1), t.weight, t.bias);
     }},
    {Op::ReLU, nullptr, [](const Node&, const Inputs& x, const TorchParams&, bool) { return torch::relu(x[0]); }},
    {Op::MaxPool2d, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       const PoolAxis rows = pool_rows(n), columns = pool_columns(n);
       return torch::max_pool2d(x[0], {rows.kernel, columns.kernel}, {rows.stride, columns.stride},
                                {rows.padding, columns.padding}, 1, n.ceil_mode);
     }},
    {Op::AvgPool2d, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       const PoolAxis rows = pool_rows(n), columns = pool_columns(n);
       return torch::avg_pool2d(x[0], {rows.kernel, columns.kernel}, {rows.stride, columns.stride},
                                {rows.padding, columns.padding}, n.ceil_mode, !n.exclude_padding);
     }},
    {Op::GlobalAvgPool, nullptr,
     [](const Node&, const Inputs& x, const TorchParams&, bool) { return torch::adaptive_avg_pool2d(x[0], {1, 1}); }},
    {Op::ChannelMean, nullptr,
     [](const Node&, const Inputs& x, const TorchParams&, bool) { return x[0].mean(1, true); }},
    {Op::ChannelMax, nullptr,
     [](const Node&, const Inputs& x, const TorchParams&, bool) { return std::get<0>(x[0].max(1, true)); }},
    {Op::Add, nullptr, [](const Node&, const Inputs& x, const TorchParams&, bool) { return x[0] + x[1]; }},
    {Op::Flatten, nullptr, [](const Node&, const Inputs& x, const TorchParams&, bool) { return x[0].flatten(1); }},
    {Op::ShortcutA, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       return torch::constant_pad_nd(x[0].index({Slice(), Slice(), Slice(None, None, 2), Slice(None, None, 2)}),
                                     {0, 0, 0, 0, n.channels, n.channels}, 0);
     }},
    {Op::ChannelShuffle, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       const auto s = x[0].sizes();
       return x[0].reshape({s[0], n.groups, s[1] / n.groups, s[2], s[3]}).transpose(1, 2).reshape(s);
     }},
    {Op::Activation, nullptr, [](const Node& n, const Inputs& x, const TorchParams&, bool) { return activation(n, x[0]); }},
    // A C x 1 x 1 gate is [N, C] in torch when it comes from a flat vector, [N, C, 1, 1] from a pool.
    {Op::Mul, nullptr,
     [](const Node&, const Inputs& x, const TorchParams&, bool) {
       return x[1].dim() == 2 ? x[0] * x[1].unsqueeze(-1).unsqueeze(-1) : x[0] * x[1];
     }},
    {Op::Concat, nullptr, [](const Node&, const Inputs& x, const TorchParams&, bool) { return torch::cat(x, 1); }},
    {Op::ChannelSlice, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) { return x[0].narrow(1, n.offset, n.channels); }},
    {Op::LayerNorm, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {  // over channels: NCHW as NHWC and back
       const torch::Tensor last = x[0].permute({0, 2, 3, 1});
       return torch::layer_norm(last, {last.size(3)}, {}, {}, n.epsilon).permute({0, 3, 1, 2});
     }},
    {Op::GroupNorm, init_batch_norm,  // an affine starts as torch's: scale 1, shift 0
     [](const Node& n, const Inputs& x, const TorchParams& t, bool) {
       return torch::group_norm(x[0], n.groups, t.weight, t.bias, n.epsilon);
     }},
    // torch's nn.PReLU starts every slope at 0.25.
    {Op::PRelu, [](const Node&, const std::vector<ActShape>&, const ParamShape& p) { return torch::full(p.shape, 0.25); },
     [](const Node&, const Inputs& x, const TorchParams& t, bool) { return torch::prelu(x[0], t.weight); }},
    {Op::Pad2d, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       return torch::constant_pad_nd(x[0], {n.pad_left, n.pad_right, n.pad_top, n.pad_bottom}, 0);
     }},
    {Op::Upsample, nullptr,  // of a C x 1 x 1 value made from a flat vector ([N, C] in torch) too
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       const torch::Tensor image = x[0].dim() == 2 ? x[0].unsqueeze(-1).unsqueeze(-1) : x[0];
       if (n.height) {  // F.interpolate's nearest, to a size
         namespace F = torch::nn::functional;
         return F::interpolate(image, F::InterpolateFuncOptions()
                                          .size(std::vector<int64_t>{n.height, n.width})
                                          .mode(torch::kNearest));
       }
       return image.repeat_interleave(n.stride, 2).repeat_interleave(upsample_across(n), 3);
     }},
    {Op::UpsampleBilinear, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       namespace F = torch::nn::functional;
       const std::vector<int64_t> size = {n.height ? n.height : x[0].size(2) * n.stride,
                                          n.width ? n.width : x[0].size(3) * upsample_across(n)};
       auto options = F::InterpolateFuncOptions().size(size).mode(torch::kBilinear);
       options.align_corners(n.align_corners);
       return F::interpolate(x[0], options);
     }},
    {Op::DepthToSpace, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) { return torch::pixel_shuffle(x[0], n.stride); }},
    // As torch's local_response_norm, with ONNX's window (torch's differs for even sizes).
    {Op::LocalResponseNorm, nullptr,
     [](const Node& n, const Inputs& x, const TorchParams&, bool) {
       const torch::Tensor squares = torch::constant_pad_nd((x[0] * x[0]).unsqueeze(1),
                                                            {0, 0, 0, 0, (n.kernel - 1) / 2, n.kernel / 2}, 0);
       const torch::Tensor mean = torch::avg_pool3d(squares, {n.kernel, 1, 1}, {1, 1, 1}).squeeze(1);
       return x[0] / (mean * n.alpha + n.epsilon).pow(n.beta);
     }},
};
}  // namespace

const TorchOp* torch_op(Op op) {
  for (const TorchOp& t : kOps)
    if (t.op == op) return &t;
  return nullptr;
}

}  // namespace octet
