#include "graph/float_node.h"

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/layout.h"
#include "graph/ops/float_reference.h"

namespace octet {

void run_float_fused(const FloatOpArgs& a) {
  const Node& n = a.node;
  op_def(n.op).run_float(a);
  FloatTensor& y = a.y;
  // Element-wise: the threads' shares do not change any value.
  if (op_traits(n.op).absorbs_residual && n.inputs.size() == 2) {
    const FloatTensor& skip = *a.inputs[1];
#pragma omp parallel for if (y.numel() >= ops::kMinParallelElements)
    for (int64_t k = 0; k < y.numel(); ++k) y.data[k] += skip.data[k];
  }
  if (n.relu) {
    const float hi = n.relu_max > 0 ? n.relu_max : std::numeric_limits<float>::infinity();
#pragma omp parallel for if (y.numel() >= ops::kMinParallelElements)
    for (int64_t k = 0; k < y.numel(); ++k) y.data[k] = std::min(std::max(y.data[k], 0.0f), hi);
  }
}

FloatLayer float_layer(const Graph& g, const std::vector<ActShape>& shapes, int node, const NodeQuant& q) {
  FloatLayer layer;
  if (g.nodes[node].op == Op::PRelu) layer.weight = q.slope;
  if (g.nodes[node].op == Op::GroupNorm) layer = {q.norm_scale, q.norm_shift.data};
  if (!op_traits(g.nodes[node].op).weighted) return layer;
  layer.weight = nhwc_weight(g, shapes, node, q.float_weight);
  layer.bias = q.float_bias.data;
  return layer;
}

void run_dequantized(const DequantizedRun& r) {
  const Node& n = r.graph.nodes[r.node];
  check(r.inputs.size() == n.inputs.size() && r.input_scales.size() == n.inputs.size() &&
            r.input_zero_points.size() == n.inputs.size() && r.float_inputs.size() == n.inputs.size(),
        "float node '" + n.name + "': " + std::to_string(r.inputs.size()) + " inputs given for " +
            std::to_string(n.inputs.size()));
  std::vector<FloatTensor> values;
  values.reserve(n.inputs.size());
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const ActShape s = r.shapes[n.inputs[k]];
    FloatTensor x({r.batch, s.h, s.w, s.c});
    if (r.float_inputs[k]) {
      std::copy(r.float_inputs[k], r.float_inputs[k] + x.numel(), x.data.begin());
    } else {
      const float step = 1.0f / r.input_scales[k];
      const int8_t* q = r.inputs[k];
      const int32_t zero_point = r.input_zero_points[k];
#pragma omp parallel for if (x.numel() >= ops::kMinParallelElements)
      for (int64_t i = 0; i < x.numel(); ++i) x.data[i] = float(q[i] - zero_point) * step;
    }
    values.push_back(std::move(x));
  }
  const ActShape out = r.shapes[r.node];
  FloatTensor y({r.batch, out.h, out.w, out.c});
  FloatOpArgs args{n, nullptr, {}, input_shapes(n, r.shapes), out, r.layer, y};
  for (const FloatTensor& x : values) args.inputs.push_back(&x);
  run_float_fused(args);
  if (r.float_y) {
    std::copy(y.data.begin(), y.data.end(), r.float_y);
    return;
  }
#pragma omp parallel for if (y.numel() >= ops::kMinParallelElements)
  for (int64_t i = 0; i < y.numel(); ++i) r.y[i] = quantize_input(y.data[i], r.q.scale, r.q.zero_point);
}

}  // namespace octet
