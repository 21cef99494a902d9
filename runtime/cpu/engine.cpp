#include "runtime/cpu/engine.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include "common/error.h"
#include "graph/layout.h"
#include "graph/op_traits.h"

namespace octet {

namespace {
// Index in `free` of the buffer for a value of `need` bytes: the smallest that
// holds it, else the largest (to be grown); -1 when none is free.
int pick_buffer(const std::vector<int>& free, const std::vector<int64_t>& bytes, int64_t need) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(free.size()); ++k)
    if (bytes[free[k]] >= need && (best < 0 || bytes[free[k]] < bytes[free[best]])) best = k;
  if (best >= 0) return best;
  for (int k = 0; k < static_cast<int>(free.size()); ++k)
    if (best < 0 || bytes[free[k]] > bytes[free[best]]) best = k;
  return best;
}
}  // namespace

struct CpuEngine::Buffers {
  std::mutex mutex;  // guards `data` and `bytes` while they are handed between runs
  std::vector<std::unique_ptr<int8_t[]>> data;  // left uninitialised: every kernel writes all its output
  std::vector<int64_t> bytes;
};

CpuEngine::CpuEngine(const QuantizedModel& model) : model_(model), shapes_(model.graph.shapes()) {
  model_.validate();
  plan_buffers();
  const Graph& g = model_.graph;
  auto weights = std::make_shared<std::vector<cpu::PackedWeights>>(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!op_traits(n.op).weighted) continue;
    const Int8Tensor w = nhwc_weight(g, shapes_, static_cast<int>(i), model_.quant[i].weight);
    const cpu::ConvGeometry geo = geometry(static_cast<int>(i), 1);
    (*weights)[i] = cpu::PackedWeights(w.ptr(), n.channels, geo.kernel, geo.in_c);
  }
  weights_ = std::move(weights);
}

CpuEngine::CpuEngine(const QuantizedModel& model, const CpuEngine& packed)
    : model_(model), shapes_(model.graph.shapes()), weights_(packed.weights_) {
  model_.validate();
  const Graph& g = model_.graph;
  const Graph& h = packed.model_.graph;
  check(g.nodes.size() == h.nodes.size(), "cpu runtime: the model does not share the packed model's graph");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    check(g.nodes[i].name == h.nodes[i].name && g.nodes[i].op == h.nodes[i].op && g.nodes[i].inputs == h.nodes[i].inputs,
          "cpu runtime: node '" + g.nodes[i].name + "' differs from the packed model's");
    check(model_.quant[i].weight.data == packed.model_.quant[i].weight.data,
          "cpu runtime: the weights of '" + g.nodes[i].name + "' differ from the packed model's");
  }
  plan_buffers();
}

// Buffer plan: inputs are freed once their last reader has been placed.
void CpuEngine::plan_buffers() {
  const Graph& g = model_.graph;
  last_use_ = g.last_readers();
  std::vector<int> free_slots;
  slot_.assign(g.nodes.size(), -1);
  for (int i = 0; i < model_.output(); ++i) {
    const int64_t bytes = shapes_[i].numel();
    const int k = pick_buffer(free_slots, slot_bytes_, bytes);
    if (k < 0) {
      slot_[i] = static_cast<int>(slot_bytes_.size());
      slot_bytes_.push_back(bytes);
    } else {
      slot_[i] = free_slots[k];
      slot_bytes_[slot_[i]] = std::max(slot_bytes_[slot_[i]], bytes);
      free_slots.erase(free_slots.begin() + k);
    }
    for (int in : g.nodes[i].inputs)
      if (last_use_[in] == i) free_slots.push_back(slot_[in]);
  }
  spare_ = std::make_shared<Buffers>();
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
  return run_nodes(input, batch, 0, static_cast<int>(model_.graph.nodes.size()), {}, hook);
}

Int32Tensor CpuEngine::run_nodes(const float* input, int64_t batch, int first, int end, const Given& given,
                                 const Hook& hook) const {
  const Graph& g = model_.graph;
  check(first >= 0 && first <= end && end <= static_cast<int>(g.nodes.size()) && (first == 0 || given),
        "cpu runtime: bad node range");
  const int output = model_.output();
  Buffers buffers;
  {
    const std::lock_guard<std::mutex> lock(spare_->mutex);
    buffers.data.swap(spare_->data);
    buffers.bytes.swap(spare_->bytes);
  }
  buffers.data.resize(slot_bytes_.size());
  buffers.bytes.resize(slot_bytes_.size(), 0);
  for (size_t s = 0; s < slot_bytes_.size(); ++s)
    if (buffers.bytes[s] < batch * slot_bytes_[s]) {
      buffers.bytes[s] = batch * slot_bytes_[s];
      buffers.data[s].reset(new int8_t[static_cast<size_t>(buffers.bytes[s])]);
    }
  const auto value = [&](int node) -> const int8_t* {
    return node < first ? given(node) : buffers.data[slot_[node]].get();
  };
  Int32Tensor logits;
  if (end > output) logits = Int32Tensor({batch, shapes_[output].c});
  for (size_t i = first; i < static_cast<size_t>(end); ++i) {
    const Node& n = g.nodes[i];
    const NodeQuant& q = model_.quant[i];
    const ActShape out = shapes_[i];
    const ActShape in = n.inputs.empty() ? out : shapes_[n.inputs[0]];
    const int8_t* x = n.inputs.empty() ? nullptr : value(n.inputs[0]);
    if (static_cast<int>(i) == output) {
      cpu::conv2d_int32(geometry(output, batch), x, (*weights_)[i], q.bias.ptr(), logits.ptr());
      break;
    }
    const int64_t count = batch * out.numel();
    int8_t* y = buffers.data[slot_[i]].get();
    switch (n.op) {
      case Op::Input: cpu::quantize_input(input, batch, out.c, out.h, out.w, q.scale, y); break;
      case Op::Conv2d:
      case Op::Linear: {
        cpu::Epilogue e;
        e.bias = q.bias.ptr();
        e.multiplier = q.multiplier.ptr();
        e.shift = q.shift.ptr();
        e.relu = n.relu;
        if (n.inputs.size() == 2) {
          e.skip = value(n.inputs[1]);
          e.skip_multiplier = q.skip_multiplier.ptr();
        }
        cpu::conv2d(geometry(static_cast<int>(i), batch), x, (*weights_)[i], e, y);
        break;
      }
      case Op::MaxPool2d: cpu::max_pool(x, batch, in.h, in.w, in.c, n.kernel, n.stride, y); break;
      case Op::AvgPool2d:
        cpu::avg_pool(x, batch, in.h, in.w, in.c, n.kernel, n.stride, q.multiplier.data[0], q.shift.data[0], y);
        break;
      case Op::GlobalAvgPool:
        cpu::global_avg_pool(x, batch, in.h, in.w, in.c, q.multiplier.data[0], q.shift.data[0], y);
        break;
      case Op::Add:
        cpu::add(x, value(n.inputs[1]), count, q.multiplier.data[0], q.multiplier.data[1], q.shift.data[0],
                 n.relu, y);
        break;
      case Op::ShortcutA: cpu::shortcut_a(x, batch, in.h, in.w, in.c, n.channels, y); break;
      case Op::ReLU: cpu::relu(x, count, y); break;
      case Op::Flatten: std::memcpy(y, x, static_cast<size_t>(count)); break;
      case Op::BatchNorm2d: fail("cpu runtime: unexpected batch norm '" + n.name + "'");
    }
    if (hook) hook(static_cast<int>(i), y, count);
  }
  const std::lock_guard<std::mutex> lock(spare_->mutex);
  if (spare_->data.empty()) {  // keep them for the next run, unless an overlapping run already did
    spare_->data.swap(buffers.data);
    spare_->bytes.swap(buffers.bytes);
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
