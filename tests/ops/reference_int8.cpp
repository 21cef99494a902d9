#include "tests/ops/reference_int8.h"

#include "common/error.h"
#include "graph/op.h"

namespace octet {

Int8Tensor nchw_to_nhwc(const Int8Tensor& x) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  Int8Tensor out({N, H, W, C});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) out.data[((n * H + y) * W + w) * C + c] = x.data[((n * C + c) * H + y) * W + w];
  return out;
}

ReferenceRun reference_run(const QuantizedModel& m, const float* input, int64_t N) {
  ReferenceRun run;
  run.values.resize(m.graph.nodes.size());
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const OpDef& def = op_def(n.op);
    check(def.run_int8_reference != nullptr, std::string("int8 reference: '") + op_name(n.op) + "' has none");
    Int8ReferenceArgs args{n, {}, m.quant[i], N, input, static_cast<int>(i) == m.output(), run.values[i], run.logits};
    for (int in : n.inputs) {
      args.inputs.push_back(&run.values[in]);
      args.input_scales.push_back(m.quant[in].scale);
    }
    def.run_int8_reference(args);
  }
  return run;
}

}  // namespace octet
