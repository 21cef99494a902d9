#include "runtime/cpu/engine.h"

#include "common/error.h"
#include "graph/layout.h"

namespace octet {

CpuEngine::CpuEngine(const QuantizedModel& model) : model_(model), shapes_(model.graph.shapes()) {
  model_.validate();
  const Graph& g = model_.graph;
  weights_.resize(g.nodes.size());
  last_use_.assign(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (int in : n.inputs) last_use_[in] = static_cast<int>(i);
    if (n.op != Op::Conv2d && n.op != Op::Linear) continue;
    const Int8Tensor w = nhwc_weight(g, shapes_, static_cast<int>(i), model_.quant[i].weight);
    weights_[i] = cpu::PackedWeights(w.ptr(), n.channels, w.dim(1));
  }
}

cpu::ConvGeometry CpuEngine::geometry(int node, int64_t batch) const {
  const Node& n = model_.graph.nodes[node];
  const ActShape in = shapes_[n.inputs[0]], out = shapes_[node];
  cpu::ConvGeometry g;
  g.batch = batch;
  g.out_c = out.c;
  if (n.op == Op::Conv2d) {
    g.in_h = in.h, g.in_w = in.w, g.in_c = in.c;
    g.out_h = out.h, g.out_w = out.w;
    g.kernel = n.kernel, g.stride = n.stride, g.padding = n.padding;
  } else {
    g.in_c = static_cast<int>(in.numel());
  }
  return g;
}

Int32Tensor CpuEngine::run(const float* input, int64_t batch, const Hook& hook) const {
  const Graph& g = model_.graph;
  const int output = model_.output();
  std::vector<std::vector<int8_t>> values(g.nodes.size());
  Int32Tensor logits({batch, shapes_[output].c});
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeQuant& q = model_.quant[i];
    const ActShape out = shapes_[i];
    const ActShape in = n.inputs.empty() ? out : shapes_[n.inputs[0]];
    const int8_t* x = n.inputs.empty() ? nullptr : values[n.inputs[0]].data();
    if (static_cast<int>(i) == output) {
      cpu::conv2d_int32(geometry(output, batch), x, weights_[i], q.bias.ptr(), logits.ptr());
      break;
    }
    std::vector<int8_t>& y = values[i];
    y.resize(static_cast<size_t>(batch * out.numel()));
    switch (n.op) {
      case Op::Input: cpu::quantize_input(input, batch, out.c, out.h, out.w, q.scale, y.data()); break;
      case Op::Conv2d:
      case Op::Linear: {
        cpu::Epilogue e;
        e.bias = q.bias.ptr();
        e.multiplier = q.multiplier.ptr();
        e.shift = q.shift.ptr();
        e.relu = n.relu;
        if (n.inputs.size() == 2) {
          e.skip = values[n.inputs[1]].data();
          e.skip_multiplier = q.skip_multiplier.ptr();
        }
        cpu::conv2d(geometry(static_cast<int>(i), batch), x, weights_[i], e, y.data());
        break;
      }
      case Op::MaxPool2d: cpu::max_pool(x, batch, in.h, in.w, in.c, n.kernel, n.stride, y.data()); break;
      case Op::AvgPool2d:
        cpu::avg_pool(x, batch, in.h, in.w, in.c, n.kernel, n.stride, q.multiplier.data[0], q.shift.data[0], y.data());
        break;
      case Op::GlobalAvgPool:
        cpu::global_avg_pool(x, batch, in.h, in.w, in.c, q.multiplier.data[0], q.shift.data[0], y.data());
        break;
      case Op::Add:
        cpu::add(x, values[n.inputs[1]].data(), static_cast<int64_t>(y.size()), q.multiplier.data[0],
                 q.multiplier.data[1], q.shift.data[0], n.relu, y.data());
        break;
      case Op::ShortcutA: cpu::shortcut_a(x, batch, in.h, in.w, in.c, n.channels, y.data()); break;
      case Op::ReLU: cpu::relu(x, static_cast<int64_t>(y.size()), y.data()); break;
      case Op::Flatten: y.assign(x, x + y.size()); break;
      case Op::BatchNorm2d: fail("cpu runtime: unexpected batch norm '" + n.name + "'");
    }
    if (hook) hook(static_cast<int>(i), y.data(), static_cast<int64_t>(y.size()));
    for (int in_node : n.inputs)  // free what no later node reads
      if (last_use_[in_node] == static_cast<int>(i)) std::vector<int8_t>().swap(values[in_node]);
  }
  return logits;
}

FloatTensor CpuEngine::dequantize_logits(const Int32Tensor& logits) const {
  const FloatTensor& scale = model_.quant[model_.output()].logit_scale;
  FloatTensor out(logits.shape);
  const int64_t classes = scale.numel();
  for (int64_t i = 0; i < logits.numel(); ++i) out.data[i] = static_cast<float>(logits.data[i]) * scale.data[i % classes];
  return out;
}

}  // namespace octet
