#include "tests/ops/device_layout_executor.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/cuda/channel_ops_kernel.h"
#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/eltwise_kernel.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/pool_kernel.h"
#include "runtime/cuda/quantize_input_kernel.h"
#include "runtime/cuda/stored_value.h"
#include "runtime/cuda/stream_schedule.h"

namespace octet {

namespace {
// The CUDA kernels' threads one after another, last first (a GPU runs them
// in any order: a thread that wrote past its own outputs would spoil those of
// a thread run before it, which the comparison then sees): the grouped conv's,
struct EveryThread {
  const int8_t* x;
  const int8_t* w;
  const cuda::GroupedConvShape& s;
  const RequantEpilogue& e;
  int8_t* y;
  template <int Lanes, int Kernel, int Pixels, bool Table>
  void run() const {
    for (int64_t item = s.items() - 1; item >= 0; --item) {
      if constexpr (Pixels == 1)
        cuda::grouped_conv_item<Lanes, Kernel, Table>(x, w, s, e, item, y);
      else
        cuda::depthwise_row_item<Pixels, Kernel, Table>(x, w, s, e, item, y);
    }
  }
};
// the pools'
struct EveryPoolThread {
  const int8_t* x;
  const cuda::PoolShape& s;
  bool max;
  const cuda::PoolMultipliers& m;
  int8_t* y;
  template <int Lanes>
  void run() const {
    for (int64_t item = s.items() - 1; item >= 0; --item)
      max ? cuda::max_pool_item<Lanes>(x, s, item, y) : cuda::avg_pool_item<Lanes>(x, s, m, item, y);
  }
};
// and the input quantization's.
struct EveryInputThread {
  const float* images;
  const cuda::InputShape& s;
  float scale;
  int8_t* y;
  template <int Pixels>
  void run() const {
    for (int64_t item = s.items() - 1; item >= 0; --item) cuda::quantize_input_item<Pixels>(images, s, scale, item, y);
  }
};
// Reads a stored input's value at a byte offset: one byte centered, or a wide value's two planes.
struct StoredReader {
  const int8_t* bytes;
  int64_t low_plane;  // the low bytes' offset from the high ones; 0: one plane
  bool unsigned_bytes;
  int32_t value(int64_t at) const {
    if (low_plane != 0) return cuda::wide_value(bytes[at], bytes[low_plane + at]);
    return cuda::stored_value(bytes[at], unsigned_bytes);
  }
};
template <int W>
cuda::ByteVector<W> vector_at(const int8_t* p) {
  cuda::ByteVector<W> v;
  std::copy_n(p, W, v.b);
  return v;
}
// The table kernels' threads: `vector` maps each W-byte vector (W as the
// kernels choose it) and its first channel to its output vector.
template <typename Vector>
void each_vector(const int8_t* x, int64_t pixels, int stored_c, int8_t* y, Vector vector) {
  cuda::visit_vector_bytes(stored_c, [&](auto w) {
    constexpr int W = decltype(w)::value;
    for (int64_t v = 0; v < pixels * (stored_c / W); ++v) {
      const cuda::ByteVector<W> out = vector(vector_at<W>(x + v * W), static_cast<int>(v * W % stored_c));
      std::copy_n(out.b, W, y + v * W);
    }
  });
}
// The LayerNorm kernel's vector functions, a pixel at a time (its lanes' integer
// sums add up to the same whatever the grouping).
void layer_norm_by_vectors(const int8_t* x, int64_t pixels, const cuda::LayerNormOperands& o, int8_t* y) {
  cuda::visit_vector_bytes(o.stored_c, [&](auto w) {
    constexpr int W = decltype(w)::value;
    for (int64_t p = 0; p < pixels; ++p) {
      const int8_t* in = x + p * o.stored_c;
      cuda::LayerNormSums s;
      for (int v = 0; v < o.stored_c / W; ++v) cuda::add_layer_norm_sums(vector_at<W>(in + v * W), o, s);
      const double m = layer_norm_multiplier(s.sum, s.squares, o.channels, o.epsilon, o.input_scale, o.output_scale);
      for (int v = 0; v < o.stored_c / W; ++v) {
        const cuda::ByteVector<W> out = cuda::layer_norm_vector(vector_at<W>(in + v * W), v * W, o, s.sum, m);
        std::copy_n(out.b, W, y + p * o.stored_c + v * W);
      }
    }
  });
}
// The GroupNorm kernel's functions, a group of a sample at a time (its threads'
// integer sums add up to the same whatever the grouping), and its padding channels zeroed.
void group_norm_by_groups(const int8_t* x, int64_t batch, int groups, const cuda::GroupNormOperands& o, int8_t* y) {
  for (int64_t b = 0; b < batch; ++b)
    for (int g = 0; g < groups; ++g) {
      cuda::LayerNormSums s;
      for (int64_t k = 0; k < o.values(); ++k) cuda::add_group_norm_sums(x[cuda::group_norm_index(o, b, g, k)], o, s);
      const double m = cuda::group_norm_multiplier(s.sum, s.squares, o);
      for (int64_t k = 0; k < o.values(); ++k) {
        const int64_t i = cuda::group_norm_index(o, b, g, k);
        y[i] = cuda::group_norm_stored(x[i], cuda::group_norm_channel(o, g, k), o, s.sum, m);
      }
    }
  for (int64_t e = 0; e < batch * o.pixels * (o.stored_c - o.channels); ++e)
    cuda::zero_channels_element(o.channels, o.stored_c, e, y);
}
// The kernels leave every stored value's padding channels 0 (channel_ops_kernel.h);
// later kernels read whole vectors and words and count on it.
void check_zero_padding(const int8_t* stored, const cuda::Storage& s, int64_t batch, const std::string& node) {
  for (int64_t p = 0; p < batch * s.pixels * s.planes; ++p)
    for (int c = s.c; c < s.padded_c; ++c)
      if (stored[p * s.padded_c + c] != 0)
        throw Error("node '" + node + "': padding channel " + std::to_string(c) + " of stored pixel " +
                    std::to_string(p) + " is " + std::to_string(stored[p * s.padded_c + c]) + ", not 0");
}
}  // namespace

LayoutRun run_in_device_layout(const QuantizedModel& model, const std::vector<float>& images, int64_t batch,
                               bool retain_all, bool imma) {
  const Graph& g = model.graph;
  const std::vector<ActShape> shapes = g.shapes();
  const cuda::ValueLayout layout = cuda::plan_model_values(
      model, shapes, "host layout", imma ? cuda::igemm::kChannelAlignment : cuda::kDp4aChannelAlignment);
  // The convs the engine may run beside its main stream (cuBLASLt's aside, whose scratch rules them out there).
  std::vector<bool> convs(g.nodes.size(), false);
  for (int i = 0; i < model.output(); ++i) convs[i] = g.nodes[i].op == Op::Conv2d;
  const cuda::StreamSchedule streams = retain_all ? cuda::StreamSchedule{} : cuda::schedule_streams(g, layout, convs);
  const cuda::ArenaPlan plan = cuda::plan_arena(g, layout, batch, retain_all, streams);
  std::vector<int8_t> arena(static_cast<size_t>(plan.bytes), int8_t{0x5A});  // not zeros, like fresh device memory
  auto value = [&](int node) { return arena.data() + plan.offset[layout.owner[node]]; };
  LayoutRun run;
  run.arena_bytes = plan.bytes;
  run.values.resize(g.nodes.size());
  const int classes = model.num_classes();
  run.logits = Int32Tensor({batch, classes});
  // Node i, in the device layout, into the arena.
  const auto run_node = [&](int i) {
    const Node& n = g.nodes[i];
    const NodeQuant& q = model.quant[i];
    const ActShape y = shapes[i];
    const ActShape x = n.inputs.empty() ? y : shapes[n.inputs[0]];
    const cuda::Storage& out = layout.storage[i];
    const int in_c = n.inputs.empty() ? 0 : layout.storage[n.inputs[0]].padded_c;
    const int8_t* src = n.inputs.empty() ? nullptr : value(n.inputs[0]);
    // Every value stored centered (stored_value.h): a zero point per input; a wide one in two planes.
    const auto zero_point_of = [&](size_t k) { return model.quant[n.inputs.at(k)].zero_point; };
    // Found once per node: a conv reads once per multiply-add (most of the harness's time under ASan).
    std::vector<StoredReader> input;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const cuda::Storage& stored = layout.storage[n.inputs[k]];
      input.push_back({value(n.inputs[k]), stored.planes == 2 ? batch * stored.plane_bytes() : 0,
                      cuda::stored_unsigned(zero_point_of(k))});
    }
    // A conv's fused activation (not with every value retained, as on CUDA): the conv writes its value,
    // through its tables, and the activation itself does nothing.
    const bool weighted = n.op == Op::Conv2d || n.op == Op::Linear;
    const int fused = weighted && !retain_all ? layout.fused_activation[i] : -1;
    const bool computed_by_layer = !retain_all && !weighted && !n.inputs.empty() &&
                                   layout.fused_activation[n.inputs[0]] == i;
    std::vector<int8_t> fused_tables;
    RequantEpilogue e;
    if (fused >= 0) {
      fused_tables = cuda::stored_tables(model, fused);
      cuda::add_fused_tables(e, model, shapes, fused, fused_tables.data());
    }
    int8_t* dst = i == model.output() ? nullptr : value(fused >= 0 ? fused : i);
    auto at = [](int64_t b, int yy, int xx, int c, int h, int w, int cs) { return ((b * h + yy) * w + xx) * cs + c; };
    if (!computed_by_layer) switch (n.op) {
      case Op::Input: {
        const cuda::ImageFold& f = out.fold;
        if (f.kind == cuda::ImageFold::kSpaceToDepth) {
          const cuda::SpaceToDepthInput s = f.space_to_depth_input(batch);
          for (int64_t item = 0; item < s.items(); ++item)
            cuda::space_to_depth_input_item(images.data(), s, q.scale, item, dst);
          break;
        }
        if (f.kind == cuda::ImageFold::kPatches) {
          const cuda::PatchInput s = f.patch_input(batch);
          for (int64_t item = 0; item < s.items(); ++item) cuda::patch_input_item(images.data(), s, q.scale, item, dst);
          break;
        }
        const cuda::InputShape s{batch, int64_t(y.h) * y.w, y.c, out.padded_c};
        cuda::visit_input_variant(s, EveryInputThread{images.data(), s, q.scale, dst});
        break;
      }
      case Op::Conv2d:
      case Op::Linear: {
        if (cuda::runs_grouped_kernel(n)) {  // the CUDA kernel's own arithmetic, thread by thread
          const cuda::PackedLayer layer = cuda::pack_grouped_layer(model, shapes, layout, i);
          e.bias = layer.bias.data(), e.multiplier = layer.multiplier.data(), e.shift = layer.shift.data();
          e.relu = n.relu, e.zero_point = q.zero_point;
          if (n.inputs.size() == 2)
            e.skip = value(n.inputs[1]), e.skip_multiplier = layer.skip_multiplier.data(),
            e.skip_zero_point = zero_point_of(1);
          cuda::GroupedConvShape s = cuda::grouped_conv_shape(g, shapes, layout, i, batch);
          s.unsigned_input = cuda::stored_unsigned(zero_point_of(0));
          s.pixels = 4;  // rows wherever they can run (the engine may time them faster); the direct form elsewhere
          cuda::visit_grouped_variant(s, e, EveryThread{src, layer.weights.data(), s, e, dst});
          break;
        }
        const bool conv = n.op == Op::Conv2d;
        cuda::WeightPacking packing;
        if (imma && conv) packing = {cuda::igemm::tap_channels(x.c), cuda::igemm::kDepthMultiple};
        const cuda::PackedLayer layer = cuda::pack_layer(model, shapes, layout, i, packing);
        const cuda::ConvGeometry geometry = conv ? cuda::conv_geometry(g, shapes, layout, i) : cuda::ConvGeometry{1, 1};
        const int k = geometry.kernel, stride = geometry.stride, pad = geometry.padding;
        const int h = geometry.in_h, w = geometry.in_w, oh = conv ? y.h : 1, ow = conv ? y.w : 1;
        const int channels = conv ? in_c : static_cast<int>(layout.storage[n.inputs[0]].bytes());
        const int tap_c = conv ? layer.tap_channels : channels;
        check(layer.depth == cuda::round_up(int64_t(k) * k * tap_c, imma && conv ? 32 : 4),
              n.name + ": packed depth " + std::to_string(layer.depth) + " is not the taps' depth rounded up");
        for (int64_t b = 0; b < batch; ++b)
          for (int oy = 0; oy < oh; ++oy)
            for (int ox = 0; ox < ow; ++ox)
              for (int o = 0; o < layer.out_c; ++o) {
                int32_t acc = 0;
                for (int ky = 0; ky < k; ++ky)
                  for (int kx = 0; kx < k; ++kx) {
                    const int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                    const int64_t pixel = at(b, iy, ix, 0, h, w, channels);
                    const int8_t* tap = layer.weights.data() + o * layer.depth + (ky * k + kx) * tap_c;
                    for (int c = 0; c < tap_c; ++c) acc += input[0].value(pixel + c) * tap[c];
                  }
                const int64_t row = (b * oh + oy) * ow + ox;
                if (i == model.output()) {
                  if (o < classes) run.logits.data[row * classes + o] = acc + layer.bias[o];
                  continue;
                }
                const bool residual = n.inputs.size() == 2;
                const int32_t skip = residual ? input[1].value(row * layer.out_c + o) : 0;
                const int32_t y_value = cuda::requantize_stored(acc + layer.bias[o], layer.multiplier[o], skip,
                                                                residual ? layer.skip_multiplier[o] : 0, layer.shift[o],
                                                                cuda::stored_range(n.relu, q.zero_point, q.bits));
                if (out.planes == 2) {
                  dst[row * layer.out_c + o] = static_cast<int8_t>(cuda::high_byte(y_value));
                  dst[batch * out.plane_bytes() + row * layer.out_c + o] = static_cast<int8_t>(cuda::low_byte(y_value));
                } else {
                  dst[row * layer.out_c + o] = static_cast<int8_t>(cuda::through_table(y_value, o, e));
                }
              }
        break;
      }
      case Op::MaxPool2d:
      case Op::AvgPool2d: {
        const cuda::PoolShape s{batch, x.h, x.w, in_c, pool_rows(n), pool_columns(n), y.h, y.w, zero_point_of(0),
                                q.zero_point, n.exclude_padding};
        const bool max = n.op == Op::MaxPool2d;
        cuda::PoolMultipliers m{{}, max ? 1 : static_cast<int>(q.multiplier.numel()), max ? 0 : q.shift.data[0]};
        for (int k = 0; !max && k < m.count; ++k) m.by_count[k] = q.multiplier.data[static_cast<size_t>(k)];
        cuda::visit_pool_variant(s, EveryPoolThread{src, s, max, m, dst});
        break;
      }
      // The CUDA kernels' own element functions (pool_kernel.h, eltwise_kernel.h, channel_ops_kernel.h), element
      // by element.
      case Op::GlobalAvgPool: {
        const cuda::GlobalPoolShape s{int64_t(x.h) * x.w, in_c, cuda::stored_unsigned(zero_point_of(0)),
                                      q.multiplier.data[0], q.shift.data[0], cuda::stored_range(false, q.zero_point)};
        for (int64_t e = 0; e < batch * in_c; ++e) cuda::global_avg_pool_element(src, s, e, dst);
        break;
      }
      case Op::Add: {
        const cuda::AddOperands o{cuda::stored_unsigned(zero_point_of(0)), cuda::stored_unsigned(zero_point_of(1)),
                                  q.multiplier.data[0], q.multiplier.data[1], q.shift.data[0],
                                  cuda::stored_range(n.relu, q.zero_point)};
        for (int64_t e = 0; e < batch * out.bytes(); ++e) cuda::add_element(src, value(n.inputs[1]), o, e, dst);
        break;
      }
      case Op::ReLU:
        for (int64_t e = 0; e < batch * out.bytes(); ++e)
          cuda::relu_element(src, cuda::stored_unsigned(zero_point_of(0)), e, dst);
        break;
      case Op::ShortcutA: {
        const cuda::ShortcutAShape s{x.h, x.w, x.c, in_c, n.channels, out.padded_c};
        for (int64_t e = 0; e < batch * out.bytes(); ++e) cuda::shortcut_a_element(src, s, e, dst);
        break;
      }
      case Op::Concat: {
        const int64_t pixels = batch * y.h * y.w;
        int first = 0;
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          const int channels = shapes[n.inputs[k]].c;
          for (int64_t e = 0; e < pixels * channels; ++e)
            cuda::concat_element(value(n.inputs[k]), layout.storage[n.inputs[k]].padded_c, channels, first,
                                 out.padded_c, q.multiplier.data[k], q.shift.data[0], zero_point_of(k), q.zero_point, e,
                                 dst);
          first += channels;
        }
        for (int64_t e = 0; e < pixels * (out.padded_c - first); ++e)
          cuda::zero_channels_element(first, out.padded_c, e, dst);
        break;
      }
      case Op::Mul:
        for (int64_t e = 0; e < batch * out.bytes(); ++e)
          cuda::mul_element(src, value(n.inputs[1]), ops::mul_gate(x, shapes[n.inputs[1]]), out.pixels, out.padded_c,
                            layout.storage[n.inputs[1]].padded_c, q.multiplier.data[0], q.shift.data[0],
                            {zero_point_of(0), zero_point_of(1), q.zero_point}, e, dst);
        break;
      case Op::ChannelMean:
      case Op::ChannelMax: {
        const bool max = n.op == Op::ChannelMax;
        const cuda::ChannelReduceOperands o{x.c, in_c, out.padded_c, cuda::stored_unsigned(zero_point_of(0)), max,
                                            max ? 0 : q.multiplier.data[0], max ? 0 : q.shift.data[0],
                                            cuda::stored_range(false, q.zero_point)};
        for (int64_t e = 0; e < batch * out.bytes(); ++e) cuda::channel_reduce_element(src, o, e, dst);
        break;
      }
      case Op::ChannelSlice:
        for (int64_t e = 0; e < batch * out.bytes(); ++e)
          cuda::slice_element(src, in_c, n.offset, n.channels, out.padded_c, e, dst);
        break;
      case Op::ChannelShuffle:
        for (int64_t e = 0; e < batch * out.bytes(); ++e)
          cuda::shuffle_element(src, x.c, n.groups, out.padded_c, e, dst);
        break;
      case Op::Activation: {
        const std::vector<int8_t> table = cuda::stored_tables(model, i);
        each_vector(src, batch * out.pixels, out.padded_c, dst, [&](const auto& in, int first_channel) {
          return cuda::table_vector(in, table.data(), first_channel, y.c);
        });
        break;
      }
      case Op::PRelu: {
        const std::vector<int8_t> tables = cuda::stored_tables(model, i);
        each_vector(src, batch * out.pixels, out.padded_c, dst, [&](const auto& in, int first_channel) {
          return cuda::channel_table_vector(in, tables.data(), first_channel, y.c);
        });
        break;
      }
      case Op::LayerNorm: {
        const cuda::LayerNormOperands o{y.c, out.padded_c, cuda::stored_unsigned(zero_point_of(0)), q.zero_point,
                                        n.epsilon, model.quant[n.inputs[0]].scale, q.scale};
        layer_norm_by_vectors(src, batch * out.pixels, o, dst);
        break;
      }
      case Op::GroupNorm: {
        const std::vector<double> affine = cuda::group_norm_affine(model, i);
        const cuda::GroupNormOperands o{y.c,
                                        out.padded_c,
                                        y.c / n.groups,
                                        out.pixels,
                                        cuda::stored_unsigned(zero_point_of(0)),
                                        q.zero_point,
                                        lowest_output(n.relu, q.zero_point),
                                        n.epsilon,
                                        model.quant[n.inputs[0]].scale,
                                        q.scale,
                                        affine.data()};
        group_norm_by_groups(src, batch, n.groups, o, dst);
        break;
      }
      case Op::LocalResponseNorm: {
        const cuda::LocalResponseOperands o{y.c, out.padded_c, n.kernel, cuda::stored_unsigned(zero_point_of(0)),
                                            q.zero_point};
        const std::vector<double> m = ops::local_response_multipliers(cuda::local_response_levels(model, i));
        for (int64_t e = 0; e < batch * out.bytes(); ++e) cuda::local_response_element(src, o, m.data(), e, dst);
        break;
      }
      case Op::Pad2d: {
        const cuda::PadShape s{x.h, x.w, y.h, y.w, out.padded_c, n.pad_top, n.pad_left};
        for (int64_t e = 0; e < batch * out.bytes(); ++e) cuda::pad_element(src, s, e, dst);
        break;
      }
      case Op::Upsample: {
        const cuda::UpsampleShape s{x.h, x.w, n.stride, upsample_across(n), out.padded_c};
        for (int64_t e = 0; e < batch * out.bytes(); ++e) cuda::upsample_element(src, s, e, dst);
        break;
      }
      case Op::Flatten: break;
      default:  // runtime/cuda/op_support.h: the runners skip models the CUDA runtime cannot run
        throw Error(n.name + ": the CUDA runtime has no kernel for operator '" + op_name(n.op) + "'");
    }
    if (i == model.output() || fused >= 0) return;  // a fused activation's value is checked at its node
    if (out.fold.kind == cuda::ImageFold::kNone && n.op != Op::Flatten)
      check_zero_padding(value(i), out, batch, n.name);
    const std::vector<int8_t> stored(value(i), value(i) + batch * out.bytes());
    if (out.planes == 2) {
      run.values[i] = cuda::strip_wide_padding(stored, out, batch);
    } else {
      const std::vector<int8_t> bytes = cuda::strip_padding(stored, out, batch, q.zero_point);
      run.values[i].assign(bytes.begin(), bytes.end());
    }
  };
  // The nodes the engine runs beside its main stream (stream_schedule.h) run
  // here as early as the side stream may start them, and again as late as it
  // may finish them: if a node of the main stream between the two wrote a
  // buffer they share, the two differ (or the network's values do).
  for (int i = 0; i <= model.output(); ++i) {
    for (const int side : streams.side_nodes) {
      if (streams.fork[side] == i) run_node(side);
      if (streams.join[side] != i) continue;
      const int written = layout.written_owner(side);
      const int8_t* bytes = value(written);
      const std::vector<int8_t> early(bytes, bytes + batch * layout.storage[written].bytes());
      run_node(side);
      if (!std::equal(early.begin(), early.end(), bytes))
        throw Error("node '" + g.nodes[side].name + "', run beside the main stream from node '" +
                    g.nodes[streams.fork[side]].name + "' to node '" + g.nodes[i].name +
                    "', stores other bytes at the end than at the start: a buffer it reads or writes is reused");
    }
    if (!streams.beside(i)) run_node(i);
  }
  return run;
}

}  // namespace octet
