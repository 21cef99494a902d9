#include "tests/ops/reference_int8.h"

#include "common/error.h"
#include "common/requantize.h"
#include "graph/float_node.h"
#include "graph/op.h"

namespace octet {

ActTensor nchw_to_nhwc(const ActTensor& x) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  ActTensor out({N, H, W, C});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) out.data[((n * H + y) * W + w) * C + c] = x.data[((n * C + c) * H + y) * W + w];
  return out;
}

std::vector<int16_t> hook_values(const QuantizedModel& model, int node, const int8_t* values, int64_t count) {
  if (model.value_bytes(node) == 1) return std::vector<int16_t>(values, values + count);
  const auto* wide = reinterpret_cast<const int16_t*>(values);
  return std::vector<int16_t>(wide, wide + count);
}

namespace {
template <typename T>
ActTensor nhwc_to_nchw(const Tensor<T>& x) {
  const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
  ActTensor out({N, C, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) out.data[((n * C + c) * H + y) * W + w] = x.data[((n * H + y) * W + w) * C + c];
  return out;
}

// A node the model keeps in float: the shared run_dequantized on NHWC copies of
// its inputs, or on the float values of a float segment (`floats`, NHWC, per
// node), where it writes its own when it is one. A flatten's output is read in
// the runtimes' order (H, W, C), not the oracle's (C, H, W), as the float
// weights' columns expect. Its int8 value: its output rounded at its scale.
// (No float node reads a wide activation: its inputs are int8.)
ActTensor run_float_node(const QuantizedModel& m, const std::vector<ActShape>& shapes,
                         const std::vector<bool>& float_outputs, int i, const std::vector<ActTensor>& values,
                         std::vector<FloatTensor>& floats, int64_t N) {
  const Node& n = m.graph.nodes[i];
  std::vector<Int8Tensor> nhwc;
  for (int in : n.inputs) {
    const Node& source = m.graph.nodes[in];
    if (float_outputs[in]) {
      nhwc.emplace_back();
      continue;
    }
    const ActTensor x = nchw_to_nhwc(source.op == Op::Flatten ? values[source.inputs[0]] : values[in]);
    nhwc.emplace_back(x.shape, std::vector<int8_t>(x.data.begin(), x.data.end()));
  }
  const FloatLayer layer = float_layer(m.graph, shapes, i, m.quant[i]);
  const ActShape out = shapes[i];
  Int8Tensor y({N, out.h, out.w, out.c});
  DequantizedRun r{m.graph, shapes, i, m.quant[i], &layer, N, {}, {}, {}, y.ptr()};
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int in = n.inputs[k];
    r.inputs.push_back(float_outputs[in] ? nullptr : nhwc[k].ptr());
    r.float_inputs.push_back(float_outputs[in] ? floats[in].ptr() : nullptr);
    r.input_scales.push_back(m.quant[in].scale);
    r.input_zero_points.push_back(m.quant[in].zero_point);
  }
  if (float_outputs[i]) {
    floats[i] = FloatTensor({N, out.h, out.w, out.c});
    r.float_y = floats[i].ptr();
    run_dequantized(r);
    for (int64_t k = 0; k < y.numel(); ++k)
      y.data[k] = quantize_input(floats[i].data[k], m.quant[i].scale, m.quant[i].zero_point);
  } else {
    run_dequantized(r);
  }
  return nhwc_to_nchw(y);
}
}  // namespace

ReferenceRun reference_run(const QuantizedModel& m, const float* input, int64_t N) {
  ReferenceRun run;
  run.values.resize(m.graph.nodes.size());
  const std::vector<ActShape> shapes = m.graph.shapes();
  const std::vector<bool> float_outputs = m.float_outputs();
  std::vector<FloatTensor> floats(m.graph.nodes.size());  // the values of float segments
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    if (m.quant[i].in_float) {
      run.values[i] = run_float_node(m, shapes, float_outputs, static_cast<int>(i), run.values, floats, N);
      continue;
    }
    const OpDef& def = op_def(n.op);
    check(def.run_int8_reference != nullptr, std::string("int8 reference: '") + op_name(n.op) + "' has none");
    const bool is_output = m.graph.is_output(static_cast<int>(i));
    if (is_output) run.outputs.emplace_back();
    Int8ReferenceArgs args{n, {}, m.quant[i], N, input, is_output, run.values[i],
                           is_output ? run.outputs.back() : run.logits};
    for (int in : n.inputs) {
      args.inputs.push_back(&run.values[in]);
      args.input_scales.push_back(m.quant[in].scale);
      args.input_zero_points.push_back(m.quant[in].zero_point);
    }
    def.run_int8_reference(args);
  }
  run.logits = run.outputs.back();
  return run;
}

}  // namespace octet
