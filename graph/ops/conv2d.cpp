// Conv2d: a 2-D convolution over an image with a kernel of kernel x kw
// (kernel_width: kernel_w, or kernel where that is 0) and the same stride,
// dilation and zero padding on every side, its channels in `groups` groups:
// output channel o reads the input channels of group o / (out / groups) only
// (groups = input channels: a depthwise convolution). Tap (ky, kx) of output
// pixel (oy, ox) reads input pixel (oy * stride - padding + ky * dilation,
// ox * stride - padding + kx * dilation): a dilated kernel spans
// (kernel - 1) * dilation + 1 pixels. Attributes: channels (out), kernel,
// kernel_w, stride, padding, dilation, groups, bias. Weight
// [out][in / groups][kernel][kw] (torch's layout).
#include "common/error.h"
#include "graph/ops/float_reference.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
// The pixels a kernel column (height) or row (width) covers: its taps `dilation` apart.
int64_t dilated_kernel(const Node& n) { return (int64_t{n.kernel} - 1) * n.dilation + 1; }
int64_t dilated_kernel_width(const Node& n) { return (int64_t{kernel_width(n)} - 1) * n.dilation + 1; }

ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const ActShape x = in[0];
  check(n.channels > 0 && n.kernel > 0 && n.kernel_w >= 0 && n.stride > 0 && n.padding >= 0, "bad conv attributes");
  check(n.stride_w == 0 && n.padding_w == -1, "a conv's stride and padding are the same down and across");
  check(n.dilation >= 1, "dilation " + std::to_string(n.dilation) + " is below 1");
  check(n.groups > 0 && x.c % n.groups == 0 && n.channels % n.groups == 0,
        std::to_string(n.groups) + " groups do not divide its " + std::to_string(x.c) + " input and " +
            std::to_string(n.channels) + " output channels");
  const int64_t span = dilated_kernel(n), span_w = dilated_kernel_width(n);
  // Checked before dividing: a negative span rounds toward zero, to one window at stride > 1.
  check(span <= x.h + 2 * int64_t{n.padding} && span_w <= x.w + 2 * int64_t{n.padding},
        (n.dilation > 1 ? "dilated kernel (" + std::to_string(span) +
                              (span_w == span ? "" : "x" + std::to_string(span_w)) + " pixels)"
                        : std::string("kernel")) +
            " larger than the padded input " + to_string(x));
  const int64_t h = window_positions(x.h, span, n.stride, n.padding);
  const int64_t w = window_positions(x.w, span_w, n.stride, n.padding);
  check(within_bound(n.channels, h, w), "output has more than 2^31 - 1 values");
  return {n.channels, static_cast<int>(h), static_cast<int>(w)};
}

std::vector<ParamShape> params(const Node& n, const std::vector<ActShape>& in) {
  std::vector<ParamShape> out = {{".weight", {n.channels, in[0].c / n.groups, n.kernel, kernel_width(n)}, true}};
  if (n.bias) out.push_back({".bias", {n.channels}, true});
  return out;
}

double macs(const Node& n, const std::vector<ActShape>& in, const ActShape& out) {
  return double(out.h) * out.w * out.c * (double(n.kernel) * kernel_width(n) * (in[0].c / n.groups));
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const Node& n = a.node;
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), k = n.kernel, kw = kernel_width(n), d = n.dilation;
  const int64_t OH = (H + 2 * n.padding - dilated_kernel(n)) / n.stride + 1;
  const int64_t OW = (W + 2 * n.padding - dilated_kernel_width(n)) / n.stride + 1;
  const int64_t group_in = C / n.groups, group_out = n.channels / n.groups;
  const std::vector<int8_t>& w = a.q.weight.data;
  const int32_t zero_point = a.input_zero_points.at(0);
  // Plain index arithmetic in the loop: the oracle of every harness case, and most of its time.
  write_weighted(a, n.channels, OH, OW, [&](int64_t b, int64_t o, int64_t oy, int64_t ox) {
    const int64_t first = o / group_out * group_in;  // the group's first input channel
    const int16_t* group_image = x.data.data() + (b * C + first) * H * W;
    const int8_t* filter = w.data() + o * group_in * k * kw;
    int32_t acc = 0;
    for (int64_t c = 0; c < group_in; ++c)
      for (int64_t ky = 0; ky < k; ++ky) {
        const int64_t iy = oy * n.stride - n.padding + ky * d;
        if (iy < 0 || iy >= H) continue;  // zero padding: a real 0
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t ix = ox * n.stride - n.padding + kx * d;
          if (ix >= 0 && ix < W)
            acc += int32_t{filter[(c * k + ky) * kw + kx]} * (int32_t{group_image[(c * H + iy) * W + ix]} - zero_point);
        }
      }
    return acc;
  });
}
}  // namespace

//                           name      in train  weight image  relu   resid  scale  mult  moves
extern const OpDef conv2d = {{Op::Conv2d, "conv2d", 1, false, true, true, true, true, true, 0, false},
                             shape, params, macs, nullptr, run_weighted_float, run_int8_reference};

}  // namespace octet::ops
