#include "graph/op.h"

#include "common/error.h"

namespace octet {

namespace ops {
#define OCTET_DECLARE_OP(enumerator, name) extern const OpDef name;
OCTET_OPS(OCTET_DECLARE_OP)
#undef OCTET_DECLARE_OP
}  // namespace ops

namespace {
const std::vector<const OpDef*>& table() {
  static const std::vector<const OpDef*> defs = {
#define OCTET_OP_ENTRY(enumerator, name) &ops::name,
      OCTET_OPS(OCTET_OP_ENTRY)
#undef OCTET_OP_ENTRY
  };
  return defs;
}
}  // namespace

const std::vector<const OpDef*>& all_op_defs() { return table(); }

const OpDef& op_def(Op op) {
  const auto index = static_cast<size_t>(op);
  check(index < table().size() && table()[index]->traits.op == op,
        "operator " + std::to_string(index) + " has no definition in graph/ops/op_list.h");
  return *table()[index];
}

const OpTraits& op_traits(Op op) { return op_def(op).traits; }

std::vector<ActShape> input_shapes(const Node& n, const std::vector<ActShape>& shapes) {
  std::vector<ActShape> in;
  in.reserve(n.inputs.size());
  for (int i : n.inputs) in.push_back(shapes[i]);
  return in;
}

double op_macs(const Node& n, const std::vector<ActShape>& shapes, int node) {
  const OpDef& def = op_def(n.op);
  return def.macs ? def.macs(n, input_shapes(n, shapes), shapes[node]) : 0.0;
}

std::vector<MultiplierTerm> multiplier_terms(const Node& n, const std::vector<ActShape>& shapes) {
  const OpDef& def = op_def(n.op);
  std::vector<MultiplierTerm> terms;
  if (def.windows) {
    for (double window : def.windows(n, input_shapes(n, shapes))) terms.push_back({0, window});
    return terms;
  }
  const int count = def.traits.input_multipliers;
  const size_t inputs = count == kAnyInputs ? n.inputs.size() : static_cast<size_t>(count);
  for (size_t k = 0; k < inputs; ++k) terms.push_back({k, 1.0});
  return terms;
}

}  // namespace octet
