#include "graph/float_executor.h"

#include <algorithm>

#include "common/error.h"
#include "graph/float_node.h"
#include "graph/layout.h"
#include "graph/ordered_gemm.h"

namespace octet {

FloatExecutor::FloatExecutor(const FloatModel& model) : graph_(model.graph), shapes_(model.graph.shapes()) {
  ordered_gemm_default_path();  // a bad OCTET_ORDERED_GEMM is refused here, not inside a parallel loop
  last_reader_ = graph_.last_readers();
  for (int o : graph_.outputs()) last_reader_[o] = static_cast<int>(graph_.nodes.size());  // outlive every range
  layers_.resize(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    if (n.op == Op::PRelu) layers_[i].weight = model.weight(n);  // the slopes
    if (n.op == Op::GroupNorm && n.bias) layers_[i] = {model.weight(n), model.bias(n).data};  // its affine
    if (!op_traits(n.op).weighted) continue;
    layers_[i].weight = nhwc_weight(graph_, shapes_, static_cast<int>(i), model.weight(n));
    layers_[i].bias = model.bias(n).data;
  }
}

FloatTensor FloatExecutor::run(const float* input, int64_t batch, const Observer& observer) const {
  return std::move(run_outputs(input, batch, observer).back());
}

std::vector<FloatTensor> FloatExecutor::run_outputs(const float* input, int64_t batch, const Observer& observer) const {
  std::vector<FloatTensor> values(graph_.nodes.size());
  values[0] = FloatTensor({batch, shapes_[0].h, shapes_[0].w, shapes_[0].c});
  const Node& in = graph_.nodes[0];
  op_def(Op::Input).run_float({in, input, {}, {}, shapes_[0], nullptr, values[0]});
  if (observer) observer(0, values[0]);
  run_nodes(values, 1, static_cast<int>(graph_.nodes.size()), observer);
  std::vector<FloatTensor> outputs;
  for (int o : graph_.outputs()) {
    outputs.push_back(std::move(values[o]));
    outputs.back().shape = logits_shape(shapes_[o], batch);
  }
  return outputs;
}

void FloatExecutor::run_nodes(std::vector<FloatTensor>& values, int first, int end, const Observer& observer) const {
  // Buffers of released values, reused for outputs of the same size (a fresh one is zero-filled on
  // this thread); only the newest few are kept, so that no more memory is held than before.
  std::vector<std::vector<float>> freed;
  constexpr size_t kFreedKept = 2;
  for (int i = first; i < end; ++i) {
    const size_t size = static_cast<size_t>(values[graph_.nodes[i].inputs.at(0)].dim(0) * shapes_[i].numel());
    const auto fits = std::find_if(freed.begin(), freed.end(), [&](const auto& b) { return b.size() == size; });
    std::vector<float> storage;
    if (fits != freed.end()) {
      storage = std::move(*fits);
      freed.erase(fits);
    }
    values[i] = run_node(i, values, std::move(storage));
    if (observer) observer(i, values[i]);
    for (int in : graph_.nodes[i].inputs)
      if (last_reader_[in] == i) {
        freed.push_back(std::move(values[in].data));
        if (freed.size() > kFreedKept) freed.erase(freed.begin());
        values[in] = FloatTensor();
      }
  }
  for (int i = first; i < end; ++i)
    if (last_reader_[i] < end) values[i] = FloatTensor();
}

FloatTensor FloatExecutor::run_node(int i, const std::vector<FloatTensor>& values, std::vector<float> storage) const {
  const Node& n = graph_.nodes[i];
  const int64_t N = values[n.inputs.at(0)].dim(0);
  const ActShape out = shapes_[i];
  const Shape shape = {N, out.h, out.w, out.c};
  FloatTensor y = static_cast<int64_t>(storage.size()) == shape_numel(shape) ? FloatTensor(shape, std::move(storage))
                                                                             : FloatTensor(shape);
  const OpDef& def = op_def(n.op);
  check(def.run_float, std::string("float executor: unexpected ") + op_name(n.op) + " node '" + n.name + "'");
  FloatOpArgs args{n, nullptr, {}, input_shapes(n, shapes_), out, &layers_[i], y};
  for (int input : n.inputs) args.inputs.push_back(&values[input]);
  run_float_fused(args);
  return y;
}

}  // namespace octet
