// The ONNX importer's ConvTranspose (a U-Net's up-convolution,
// nn.ConvTranspose2d; grouped and depthwise too, as CenterNet's and FCN's
// upsampling convs) and DepthToSpace (torch's pixel_shuffle: ESPCN's
// super-resolution). A transposed conv of stride s is s x s ordinary convs,
// one per output phase (sub-pixel convolution): along an axis, full output
// s q + r is the sum over m of x[q - m] w[r + s m]. octet makes them one conv
// at the input's resolution with s^2 C_out channels (phase r's taps, m from
// ceil(k / s) - 1 down to 0, zeros past the kernel; the input padded by
// ceil(k / s) - 1 before and as far after as the output reaches), then a
// depth_to_space of block s sets each phase's pixels in place, and a crop
// takes ConvTranspose's pads off the full output. Exact as a float graph; in
// int8 the conv is an ordinary one.
#include <algorithm>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
// One axis of a transposed conv as the sub-pixel conv computes it.
struct PhaseAxis {
  int64_t taps;        // the conv's kernel along the axis: ceil(k / s)
  int64_t pad_before;  // taps - 1
  int64_t pad_after;   // zeros after the input, so the conv reaches the last output
  int64_t crop_begin, length;  // ConvTranspose's output within the full one
};

PhaseAxis phase_axis(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                     int64_t output_padding) {
  PhaseAxis a;
  a.taps = (kernel + stride - 1) / stride;
  a.pad_before = a.taps - 1;
  a.length = (in - 1) * stride + kernel - pad_begin - pad_end + output_padding;
  a.pad_after = std::max<int64_t>(0, (pad_begin + a.length + stride - 1) / stride - in);
  a.crop_begin = pad_begin;
  return a;
}
}  // namespace

void Importer::conv_transpose(const onnx::NodeProto& n) {
  const FloatTensor w = constant(n, 1);  // [C_in, C_out / group, kH, kW]
  if (w.shape.size() != 4 || is_one_row(n, 0)) refuse(n, "a weight of shape " + shape_string(w.shape) +
                                                          ": octet imports 2-D transposed convolutions");
  const int x = activation(n, 0);
  const ActShape s = shape_of(x);
  const int64_t in_c = w.dim(0), group_out = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  if (in_c != s.c) refuse(n, "a weight of shape " + shape_string(w.shape) + " for " + to_string(s) + " images");
  const int64_t group = int_attribute(n, "group", 1);
  if (group < 1 || in_c % group != 0)
    refuse(n, "group " + std::to_string(group) + " for " + std::to_string(in_c) + " input channels");
  const int64_t out_c = group_out * group, group_in = in_c / group;
  if (string_attribute(n, "auto_pad", "NOTSET") != "NOTSET" || !ints_attribute(n, "output_shape", {}).empty())
    refuse(n, "auto_pad or output_shape: octet takes a transposed conv's pads and output_padding as given");
  const std::vector<int64_t> strides = ints_attribute(n, "strides", {1, 1});
  const std::vector<int64_t> dilations = ints_attribute(n, "dilations", {1, 1});
  const std::vector<int64_t> pads = ints_attribute(n, "pads", {0, 0, 0, 0});
  const std::vector<int64_t> extra = ints_attribute(n, "output_padding", {0, 0});
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1 || strides[0] > 16)
    refuse(n, "strides " + ints_string(strides) + ": octet's transposed convs stride 1 to 16, alike both ways");
  if (dilations != std::vector<int64_t>{1, 1}) refuse(n, "dilations " + ints_string(dilations));
  const int64_t stride = strides[0];
  if (kh < 1 || kw < 1 || kh > 64 || kw > 64 || pads.size() != 4 || extra.size() != 2)
    refuse(n, "a kernel of " + std::to_string(kh) + "x" + std::to_string(kw) + ", pads " + ints_string(pads) +
                  ", output_padding " + ints_string(extra));
  for (int64_t v : pads)
    if (v < 0 || v >= 64) refuse(n, "pads " + ints_string(pads));
  for (int64_t v : extra)
    if (v < 0 || v >= stride) refuse(n, "output_padding " + ints_string(extra) + " (0 to the stride less 1)");
  const PhaseAxis rows = phase_axis(s.h, kh, stride, pads[0], pads[2], extra[0]);
  const PhaseAxis columns = phase_axis(s.w, kw, stride, pads[1], pads[3], extra[1]);
  if (rows.length < 1 || columns.length < 1) refuse(n, "an empty output of " + to_string(s) + " images");
  FloatTensor bias(Shape{out_c}, 0.0f);
  if (has_input(n, 2)) bias = constant(n, 2);
  if (bias.shape != Shape{out_c}) refuse(n, "a bias of shape " + shape_string(bias.shape));

  // Groups stay groups: output channel co's phases are adjacent (pixel_shuffle's order), so each group's
  // outputs are the sub-pixel conv's channels co s^2 .. for the co of its group, read from its own inputs.
  const int64_t phases = stride * stride;
  FloatTensor g({out_c * phases, group_in, rows.taps, columns.taps}, 0.0f);
  FloatTensor g_bias({out_c * phases}, 0.0f);
  for (int64_t co = 0; co < out_c; ++co)
    for (int64_t ry = 0; ry < stride; ++ry)
      for (int64_t rx = 0; rx < stride; ++rx) {
        const int64_t o = (co * stride + ry) * stride + rx;  // pixel_shuffle's channel of this phase
        g_bias.data[o] = bias.data[co];
        for (int64_t i = 0; i < group_in; ++i) {
          const int64_t ci = co / group_out * group_in + i;  // the input channel: its group's i-th
          for (int64_t my = 0; my < rows.taps && ry + stride * my < kh; ++my)
            for (int64_t mx = 0; mx < columns.taps && rx + stride * mx < kw; ++mx)
              g.data[((o * group_in + i) * rows.taps + rows.taps - 1 - my) * columns.taps + columns.taps - 1 - mx] =
                  w.data[((ci * group_out + co % group_out) * kh + ry + stride * my) * kw + rx + stride * mx];
        }
      }
  int y = x;
  if (rows.pad_before || columns.pad_before || rows.pad_after || columns.pad_after)
    y = builder_.pad(y, static_cast<int>(rows.pad_before), static_cast<int>(columns.pad_before),
                     static_cast<int>(rows.pad_after), static_cast<int>(columns.pad_after));
  const std::string name = layer_name(n);
  y = builder_.conv_rect(name, y, static_cast<int>(out_c * phases), static_cast<int>(rows.taps),
                         static_cast<int>(columns.taps), 1, 0, true, static_cast<int>(group));
  params_[name + ".weight"] = std::move(g);
  params_[name + ".bias"] = std::move(g_bias);
  if (stride > 1) y = builder_.depth_to_space(y, static_cast<int>(stride));
  const ActShape full = shape_of(y);
  if (rows.crop_begin || columns.crop_begin || full.h != rows.length || full.w != columns.length)
    y = subsample(y, rows.crop_begin, columns.crop_begin, rows.crop_begin + rows.length,
                  columns.crop_begin + columns.length, 1, 1);
  define(n, y);
}

// A batch norm of a transposed conv (a U-Net's up-convolution, BN, ReLU) folds into its sub-pixel conv: output
// channel c is conv channels c b^2 to (c + 1) b^2 - 1. Where x is a depth_to_space (or a crop of one) of a conv
// that nothing else reads, and the norm is all that reads x; then defines n.
bool Importer::fold_batch_norm_into_phases(const onnx::NodeProto& n, int x) {
  int spread = x;
  const Node& p = node_at(spread);
  if (p.op == Op::Pad2d && p.pad_top <= 0 && p.pad_left <= 0 && p.pad_bottom <= 0 && p.pad_right <= 0)
    spread = p.inputs[0];  // the crop of ConvTranspose's pads
  if (node_at(spread).op != Op::DepthToSpace || uses_[n.input(0)] != 1) return false;
  const std::vector<std::vector<int>> readers = builder_.graph().consumers();
  const auto sole_reader_of = [&](int node, int reader) { return readers[node] == std::vector<int>{reader}; };
  const int conv = node_at(spread).inputs[0];
  const Node& c = node_at(conv);
  if (c.op != Op::Conv2d || c.relu || c.inputs.size() != 1 || !sole_reader_of(conv, spread) ||
      (spread != x && !sole_reader_of(spread, x)))
    return false;
  const int64_t phases = int64_t{node_at(spread).stride} * node_at(spread).stride;
  FloatTensor& w = params_[c.name + ".weight"];
  FloatTensor& b = params_[c.name + ".bias"];
  const int64_t per_channel = w.numel() / w.dim(0);
  const BatchNormAffine a = batch_norm_affine(n, w.dim(0) / phases);
  for (int64_t o = 0; o < w.dim(0); ++o) {
    const double scale = a.scale[o / phases], shift = a.shift[o / phases];
    for (int64_t k = 0; k < per_channel; ++k)
      w.data[o * per_channel + k] = static_cast<float>(w.data[o * per_channel + k] * scale);
    b.data[o] = static_cast<float>(b.data[o] * scale + shift);
  }
  ++summary_.folded_batch_norms;
  define(n, x);
  return true;
}

// DepthToSpace: mode CRD is pixel_shuffle's order; DCR's (offset-major channels) is a channel shuffle away.
void Importer::depth_to_space_node(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ActShape s = shape_of(x);
  const int64_t block = int_attribute(n, "blocksize", 0);
  const std::string mode = string_attribute(n, "mode", "DCR");
  if (is_flat(x) || block < 2 || block > 16 || s.c % (block * block) != 0)
    refuse(n, "blocksize " + std::to_string(block) + " of images " + to_string(s) +
                  ": octet takes 2 to 16, its square dividing the channels");
  if (mode != "DCR" && mode != "CRD") refuse(n, "mode '" + mode + "'");
  const int y = mode == "DCR" ? builder_.channel_shuffle(x, static_cast<int>(block * block)) : x;
  define(n, builder_.depth_to_space(y, static_cast<int>(block)));
}

}  // namespace octet::onnx_import
