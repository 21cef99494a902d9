// Every operator (graph/op.h) against every backend's table of kernels: the
// float executor and the int8 reference (each operator's definition), the CPU
// runtime (runtime/cpu/kernel_table.cpp), the CUDA runtime
// (runtime/cuda/op_support.cpp), the LibTorch trainer (train/torch_ops.cpp)
// and the ONNX export (interop/onnx_ops.cpp). One entry per pair: a backend
// without a kernel for an operator is a skip that says so, never a silent gap;
// the float executor, the int8 reference and the CPU runtime, which every
// quantized model needs, must run every operator of an inference graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "graph/op.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cuda/op_support.h"
#ifdef OCTET_HAVE_TORCH
#include "train/torch_ops.h"
#endif
#ifdef OCTET_HAVE_ONNX
#include "interop/onnx_export.h"
#endif

namespace octet {
namespace {

struct Backend {
  const char* name;
  bool required;  // every inference operator must have a kernel here
  // "" when it has a kernel for `op`, else why not.
  std::string (*missing)(const OpDef& def);
};

const Backend kBackends[] = {
    {"float_executor", true,
     [](const OpDef& d) { return d.run_float ? "" : std::string("the definition has no float reference"); }},
    {"int8_reference", true,
     [](const OpDef& d) { return d.run_int8_reference ? "" : std::string("the definition has no int8 reference"); }},
    {"cpu", true,
     [](const OpDef& d) {
       const auto& table = cpu::kernel_table();
       const bool portable = std::any_of(table.begin(), table.end(), [&](const cpu::Kernel& k) {
         return k.op == d.traits.op && k.path == cpu::KernelPath::Reference;
       });
       return portable ? "" : std::string("runtime/cpu/kernel_table.cpp has no portable kernel for it");
     }},
    {"cuda", false,
     [](const OpDef& d) {
       Node n;
       n.op = d.traits.op;
       return cuda::why_node_unsupported(n);
     }},
    {"torch_trainer", false,
     [](const OpDef& d) {
#ifdef OCTET_HAVE_TORCH
       return torch_op(d.traits.op) ? "" : std::string("train/torch_ops.cpp has no entry for it");
#else
       (void)d;
       return std::string("this build has no LibTorch");
#endif
     }},
    {"onnx_export", false,
     [](const OpDef& d) {
#ifdef OCTET_HAVE_ONNX
       return onnx_exports(d.traits.op) ? "" : std::string("interop/onnx_ops.cpp has no entry for it");
#else
       (void)d;
       return std::string("this build has no ONNX library");
#endif
     }},
};

bool trains(const Backend& b) { return std::string(b.name) == "torch_trainer"; }

// The (operator, backend) pairs that mean something: an operator that exists
// only in training graphs (batch norm) against the trainer alone.
std::vector<std::pair<const OpDef*, const Backend*>> pairs() {
  std::vector<std::pair<const OpDef*, const Backend*>> out;
  for (const OpDef* def : all_op_defs())
    for (const Backend& b : kBackends)
      if (!def->traits.training_only || trains(b)) out.push_back({def, &b});
  return out;
}

class OpCoverage : public ::testing::TestWithParam<std::pair<const OpDef*, const Backend*>> {};

TEST_P(OpCoverage, BackendHasAKernelOrSaysWhyNot) {
  const OpDef& def = *GetParam().first;
  const Backend& backend = *GetParam().second;
  const std::string why = backend.missing(def);
  if (why.empty()) return;
  if (backend.required) FAIL() << backend.name << " must run every inference operator: " << why;
  GTEST_SKIP() << backend.name << " does not run " << def.traits.name << ": " << why;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpCoverage, ::testing::ValuesIn(pairs()),
                         [](const ::testing::TestParamInfo<OpCoverage::ParamType>& info) {
                           return std::string(info.param.first->traits.name) + "_" + info.param.second->name;
                         });

// op_def(op) finds each operator by its enumerator: the list and the table agree.
TEST(OpCoverage, EveryOperatorHasOneDefinitionInEnumOrder) {
  for (size_t i = 0; i < all_op_defs().size(); ++i) EXPECT_EQ(static_cast<size_t>(all_op_defs()[i]->traits.op), i);
}

}  // namespace
}  // namespace octet
