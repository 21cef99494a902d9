#include "runtime/cuda/device_layout.h"

#include <algorithm>
#include <array>

#include "common/error.h"
#include "graph/layout.h"
#include "graph/ops/activation.h"
#include "graph/ops/group_norm.h"
#include "graph/ops/prelu.h"
#include "graph/op_traits.h"
#include "runtime/cuda/channel_ops_kernel.h"
#include "runtime/cuda/folded_input.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

namespace {

Storage storage_of(int64_t pixels, int c, int padded_c) {
  Storage s;
  s.pixels = pixels, s.c = c, s.padded_c = padded_c;
  return s;
}

Storage storage_of(const ActShape& s, int alignment) {
  return storage_of(int64_t(s.h) * s.w, s.c, padded_channels(s.c, alignment));
}

Storage folded_storage(const ImageFold& fold) {
  Storage s = storage_of(int64_t(fold.stored_h()) * fold.stored_w(), fold.channels, fold.stored_c());
  s.fold = fold;
  return s;
}

std::vector<int32_t> padded(const Int32Tensor& values, int count, int32_t fill) {
  std::vector<int32_t> out = values.data;
  out.resize(static_cast<size_t>(count), fill);
  return out;
}

// bias, multiplier, shift and skip multiplier of `node` padded to p.out_c
// channels that requantize to 0 (no requantization for the output node).
void pad_requantization(const QuantizedModel& model, int node, PackedLayer& p) {
  const NodeQuant& q = model.quant[node];
  p.bias = padded(q.bias, p.out_c, 0);
  if (node == model.graph.output()) return;
  p.multiplier = padded(q.multiplier, p.out_c, 0);
  p.shift = padded(q.shift, p.out_c, 1);
  if (model.graph.nodes[node].inputs.size() == 2) p.skip_multiplier = padded(q.skip_multiplier, p.out_c, 0);
}

// ValueLayout::fused_activation: an activation or PRelu whose table the
// layer before it applies to the words it stores (every CUDA conv and linear
// kernel can: stored_value.h word_through_table), so that the layer's value is
// not written and read again.
std::vector<int> fused_activations(const QuantizedModel& m, const ValueLayout& layout) {
  const Graph& g = m.graph;
  const std::vector<std::vector<int>> consumers = g.consumers();
  std::vector<int> fused(g.nodes.size(), -1);
  for (int i = 0; i < g.output(); ++i) {
    const Node& n = g.nodes[i];
    if ((n.op != Op::Conv2d && n.op != Op::Linear) || consumers[i].size() != 1) continue;
    const int j = consumers[i][0];
    const Op op = g.nodes[j].op;
    if (j < g.output() && (op == Op::Activation || op == Op::PRelu) && m.quant[i].bits == 8 && m.quant[j].bits == 8 &&
        layout.storage[i] == layout.storage[j])
      fused[i] = j;
  }
  return fused;
}

}  // namespace

ValueLayout plan_values(const Graph& g, const std::vector<ActShape>& shapes, const std::string& who,
                        int channel_alignment) {
  check(channel_alignment > 0 && channel_alignment % 4 == 0,
        who + ": channel alignment " + std::to_string(channel_alignment) + " is not a positive multiple of 4");
  const int output = g.output();
  ValueLayout v;
  v.channel_alignment = channel_alignment;
  v.storage.resize(g.nodes.size());
  v.owner.assign(g.nodes.size(), -1);
  for (int i = 0; i < output; ++i) {
    const Node& n = g.nodes[i];
    const std::string at = who + ": node '" + n.name + "' (" + op_name(n.op) + ")";
    v.owner[i] = i;
    const ImageFold fold =
        channel_alignment == igemm::kChannelAlignment ? image_fold(g, shapes, i) : ImageFold{};
    v.storage[i] = fold.kind != ImageFold::kNone ? folded_storage(fold) : storage_of(shapes[i], channel_alignment);
    switch (n.op) {
      case Op::Flatten:  // the same bytes, read as one vector
        v.owner[i] = v.owner[n.inputs[0]];
        v.storage[i] = v.storage[n.inputs[0]];
        break;
      case Op::Add:
      case Op::ReLU: v.storage[i] = v.storage[n.inputs[0]]; break;
      case Op::BatchNorm2d: fail(at + ": batch norm must be folded before quantization");
      default: break;
    }
    // Image operators, and those whose CUDA kernels index every input by pixel and channel.
    const bool reads_pixels = op_traits(n.op).reads_image || n.op == Op::Concat || n.op == Op::Mul ||
                              n.op == Op::ChannelSlice || n.op == Op::Activation || n.op == Op::LayerNorm ||
                              n.op == Op::PRelu;
    if (reads_pixels)
      for (const int in : n.inputs)
        check(v.storage[in] == storage_of(shapes[in], channel_alignment) || v.storage[in].fold.kind != ImageFold::kNone,
              at + ": reads a flattened value as an image, which the CUDA runtime does not support");
    if (n.op == Op::Add)
      check(v.storage[n.inputs[0]] == v.storage[n.inputs[1]],
            at + ": its two inputs are stored differently (a flattened and an unflattened vector)");
    if (op_traits(n.op).absorbs_residual && n.inputs.size() == 2)
      check(v.storage[n.inputs[1]] == v.storage[i], at + ": its residual input is stored differently from its output");
  }
  return v;
}

std::vector<int8_t> pack_weight_rows(const int8_t* rows, int out_c, int64_t taps, int in_c, int padded_out_c,
                                     int tap_channels, int64_t depth) {
  check(in_c <= tap_channels && taps * tap_channels <= depth && out_c <= padded_out_c,
        "pack_weight_rows: " + std::to_string(in_c) + " channels do not fit taps of " + std::to_string(tap_channels) +
            " bytes in K = " + std::to_string(depth));
  std::vector<int8_t> packed(static_cast<size_t>(padded_out_c * depth), 0);
  for (int64_t o = 0; o < out_c; ++o)
    for (int64_t t = 0; t < taps; ++t)
      std::copy_n(rows + (o * taps + t) * in_c, in_c, packed.begin() + o * depth + t * tap_channels);
  return packed;
}

ConvGeometry conv_geometry(const Graph& g, const std::vector<ActShape>& shapes, const ValueLayout& values, int node) {
  const Node& n = g.nodes[node];
  const ActShape x = shapes[n.inputs[0]];
  const ImageFold& fold = values.storage[n.inputs[0]].fold;
  if (fold.kind == ImageFold::kNone) return {x.h, x.w, n.kernel, n.stride, n.padding};
  const FoldedConv f = folded_conv(fold, n);
  return {f.in_h, f.in_w, f.kernel, f.stride, f.padding};
}

PackedLayer pack_layer(const QuantizedModel& model, const std::vector<ActShape>& shapes, const ValueLayout& values,
                       int node, const WeightPacking& packing) {
  const Graph& g = model.graph;
  const Node& n = g.nodes[node];
  const NodeQuant& q = model.quant[node];
  const Storage& in = values.storage[n.inputs[0]];
  // A conv reads kernel x kernel pixels of its input, a linear all of its stored pixels.
  const int64_t taps = n.op == Op::Conv2d ? int64_t(n.kernel) * n.kernel : in.pixels;
  const Int8Tensor w = nhwc_weight(g, shapes, node, q.weight);  // [O][taps * c], NHWC reading order
  check(w.dim(1) == taps * in.c, "node '" + n.name + "': weight has " + std::to_string(w.dim(1)) +
                                     " inputs, expected " + std::to_string(taps * in.c));
  PackedLayer p;
  p.out_c = padded_channels(n.channels, values.channel_alignment);
  if (in.fold.kind != ImageFold::kNone) {
    const FoldedConv f = folded_conv(in.fold, n);
    const std::vector<int8_t> rows = fold_weight_rows(in.fold, n, w.ptr(), in.c);
    const int64_t folded_taps = int64_t(f.kernel) * f.kernel;
    p.tap_channels = f.tap_channels;
    p.depth = round_up(folded_taps * f.tap_channels, packing.depth_multiple);
    p.weights =
        pack_weight_rows(rows.data(), n.channels, folded_taps, f.tap_channels, p.out_c, f.tap_channels, p.depth);
    pad_requantization(model, node, p);
    return p;
  }
  p.tap_channels = packing.tap_channels > 0 ? packing.tap_channels : in.padded_c;
  check(p.tap_channels >= in.c && p.tap_channels <= in.padded_c && packing.depth_multiple > 0,
        "node '" + n.name + "': " + std::to_string(p.tap_channels) + " bytes per tap cannot hold its " +
            std::to_string(in.c) + " input channels within the stored " + std::to_string(in.padded_c));
  p.depth = round_up(taps * p.tap_channels, packing.depth_multiple);
  p.weights = pack_weight_rows(w.ptr(), n.channels, taps, in.c, p.out_c, p.tap_channels, p.depth);
  pad_requantization(model, node, p);
  return p;
}

GroupedConvShape grouped_conv_shape(const Graph& g, const std::vector<ActShape>& shapes, const ValueLayout& values,
                                    int node, int64_t batch) {
  const Node& n = g.nodes[node];
  const ActShape x = shapes[n.inputs[0]], y = shapes[node];
  GroupedConvShape s;
  s.batch = batch;
  s.in_h = x.h, s.in_w = x.w, s.in_stored_c = values.storage[n.inputs[0]].padded_c;
  s.out_h = y.h, s.out_w = y.w, s.out_stored_c = padded_channels(n.channels, values.channel_alignment);
  s.out_channels = n.channels;
  s.in_per_group = x.c / n.groups, s.out_per_group = n.channels / n.groups;
  s.kernel = n.kernel, s.kernel_w = kernel_width(n), s.stride = n.stride, s.padding = n.padding;
  s.dilation = n.dilation;
  s.pixels = s.default_row_pixels();
  return s;
}

PackedLayer pack_grouped_layer(const QuantizedModel& model, const std::vector<ActShape>& shapes,
                               const ValueLayout& values, int node) {
  const Graph& g = model.graph;
  const Node& n = g.nodes[node];
  check(node != g.output(), "node '" + n.name + "': a grouped or dilated convolution cannot be the output node");
  const GroupedConvShape s = grouped_conv_shape(g, shapes, values, node, 1);
  const int taps = n.kernel * kernel_width(n);
  const Int8Tensor w = nhwc_weight(g, shapes, node, model.quant[node].weight);  // [O][taps][in_per_group]
  check(w.dim(1) == int64_t(taps) * s.in_per_group, "node '" + n.name + "': weight has " + std::to_string(w.dim(1)) +
                                                        " inputs, expected " + std::to_string(taps * s.in_per_group));
  PackedLayer p;
  p.out_c = s.out_stored_c;
  p.tap_channels = s.in_per_group;
  p.depth = int64_t(taps) * s.in_per_group;
  p.weights.assign(static_cast<size_t>(p.depth * p.out_c), 0);
  for (int o = 0; o < n.channels; ++o)
    for (int t = 0; t < taps; ++t)
      for (int ci = 0; ci < s.in_per_group; ++ci)
        p.weights[grouped_weight_offset(s, t, ci, o)] = w.data[(int64_t(o) * taps + t) * s.in_per_group + ci];
  pad_requantization(model, node, p);
  return p;
}

std::vector<int8_t> stored_tables(const QuantizedModel& model, int node) {
  const Node& n = model.graph.nodes[node];
  const NodeQuant& q = model.quant[node];
  const NodeQuant& in = model.quant[n.inputs[0]];
  if (n.op == Op::PRelu)
    return stored_channel_tables(ops::prelu_tables(q.slope, in.scale, q.scale, in.zero_point, q.zero_point),
                                 in.zero_point, q.zero_point);
  check(n.op == Op::Activation, "node '" + n.name + "' has no table: it is neither an activation nor a PRelu");
  const std::array<int8_t, 256> table = stored_activation_table(
      ops::activation_table(n, in.scale, q.scale, in.zero_point, q.zero_point), in.zero_point, q.zero_point);
  return std::vector<int8_t>(table.begin(), table.end());
}

ops::LocalResponseLevels local_response_levels(const QuantizedModel& model, int node) {
  const NodeQuant& q = model.quant[node];
  const NodeQuant& in = model.quant[model.graph.nodes[node].inputs[0]];
  return ops::local_response_levels(model.graph.nodes[node], in.scale, q.scale, in.zero_point, q.zero_point);
}

std::vector<double> group_norm_affine(const QuantizedModel& model, int node) {
  const NodeQuant& q = model.quant[node];
  const int64_t channels = model.graph.shapes()[node].c;
  const std::vector<ops::GroupNormChannel> c = ops::group_norm_channels(channels, q.norm_scale, q.norm_shift, q.scale);
  std::vector<double> affine(2 * c.size());
  for (size_t k = 0; k < c.size(); ++k) affine[k] = c[k].scale, affine[c.size() + k] = c[k].shift;
  return affine;
}

void add_fused_tables(RequantEpilogue& e, const QuantizedModel& model, const std::vector<ActShape>& shapes,
                      int activation, const int8_t* tables) {
  e.table = tables;
  e.table_stride = model.graph.nodes[activation].op == Op::PRelu ? 256 : 0;
  e.table_channels = shapes[activation].c;
}

ArenaPlan plan_arena(const Graph& g, const ValueLayout& values, int64_t batch, bool retain_all,
                     const StreamSchedule& streams) {
  check(!retain_all || streams.side_nodes.empty(), "plan_arena: with every value retained, nothing runs beside");
  const int n_nodes = static_cast<int>(g.nodes.size());
  ArenaPlan plan;
  plan.last_use.assign(n_nodes, -1);
  for (int i = 0; i < g.output(); ++i)
    if (values.owner[i] == i) plan.last_use[i] = retain_all ? n_nodes : i;
  for (int i = 0; i < n_nodes; ++i)
    for (int in : g.nodes[i].inputs) plan.last_use[values.owner[in]] = std::max(plan.last_use[values.owner[in]], i);
  std::vector<int> first_write(n_nodes);
  for (int i = 0; i < n_nodes; ++i) first_write[i] = i;
  if (!retain_all)
    for (int i = 0; i < n_nodes; ++i)
      if (const int activation = values.fused_activation.empty() ? -1 : values.fused_activation[i]; activation >= 0)
        first_write[activation] = i, first_write[i] = -1;
  for (const int side : streams.side_nodes) {
    const int written = values.written_owner(side);
    first_write[written] = std::min(first_write[written], streams.fork[side]);
    for (const int in : g.nodes[side].inputs)
      plan.last_use[values.owner[in]] = std::max(plan.last_use[values.owner[in]], streams.join[side] - 1);
  }

  struct Placed {
    int64_t begin, end;
    int first, last;
  };
  std::vector<Placed> placed;
  plan.offset.assign(n_nodes, -1);
  for (int i = 0; i < g.output(); ++i) {
    if (values.owner[i] != i || first_write[i] < 0) continue;
    const int64_t size = round_up(batch * values.storage[i].bytes(), kBufferAlignment);
    std::vector<std::pair<int64_t, int64_t>> busy;  // address ranges of the values alive with this one
    for (const Placed& p : placed)
      if (p.first <= plan.last_use[i] && first_write[i] <= p.last) busy.emplace_back(p.begin, p.end);
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [begin, end] : busy) {
      if (at + size <= begin) break;
      at = std::max(at, end);
    }
    placed.push_back({at, at + size, first_write[i], plan.last_use[i]});
    plan.offset[i] = at;
    plan.bytes = std::max(plan.bytes, at + size);
  }
  return plan;
}

ValueLayout plan_model_values(const QuantizedModel& m, const std::vector<ActShape>& shapes, const std::string& who,
                              int channel_alignment) {
  ValueLayout layout = plan_values(m.graph, shapes, who, channel_alignment);
  for (size_t i = 0; i < layout.storage.size(); ++i)
    if (m.quant[i].bits > 8) layout.storage[i].planes = 2;
  layout.fused_activation = fused_activations(m, layout);
  return layout;
}

std::vector<int16_t> strip_wide_padding(const std::vector<int8_t>& stored, const Storage& s, int64_t batch) {
  check(s.planes == 2 && static_cast<int64_t>(stored.size()) == batch * s.bytes(),
        "strip_wide_padding: not a wide value's buffer");
  const int64_t plane = batch * s.plane_bytes();
  std::vector<int16_t> out;
  out.reserve(static_cast<size_t>(batch * s.pixels * s.c));
  for (int64_t r = 0; r < batch * s.pixels; ++r)
    for (int c = 0; c < s.c; ++c)
      out.push_back(static_cast<int16_t>(wide_value(stored[r * s.padded_c + c], stored[plane + r * s.padded_c + c])));
  return out;
}

std::vector<int8_t> strip_padding(const std::vector<int8_t>& stored, const Storage& s, int64_t batch,
                                  int32_t zero_point) {
  check(static_cast<int64_t>(stored.size()) == batch * s.bytes(), "strip_padding: buffer size does not match");
  std::vector<int8_t> out;
  if (s.fold.kind != ImageFold::kNone) {
    out.reserve(static_cast<size_t>(batch * s.fold.height * s.fold.width * s.c));
    for (int64_t b = 0; b < batch; ++b)
      for (int y = 0; y < s.fold.height; ++y)
        for (int x = 0; x < s.fold.width; ++x)
          for (int c = 0; c < s.c; ++c) out.push_back(stored[b * s.bytes() + s.fold.offset_of(y, x, c)]);
  } else {
    out.reserve(static_cast<size_t>(batch * s.pixels * s.c));
    for (int64_t r = 0; r < batch * s.pixels; ++r)
      out.insert(out.end(), stored.begin() + r * s.padded_c, stored.begin() + r * s.padded_c + s.c);
  }
  for (int8_t& v : out) v = static_cast<int8_t>(v + zero_point);  // stored centered (stored_value.h)
  return out;
}

}  // namespace octet::cuda
