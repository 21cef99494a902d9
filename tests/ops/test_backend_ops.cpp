// Every operator over a table of shapes (tests/ops/op_cases.cpp), then whole
// networks, on every backend (tests/ops/backend_runners.cpp), compared bit for bit
// with the naive reference (tests/ops/reference_int8.cpp) at every node and in
// the logits, like ggml's test-backend-ops. A backend absent from this build
// or machine is reported as skipped with the reason. Run on its own, the
// program ends with a table of cases x backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "graph/op.h"
#include "tests/ops/backend_runners.h"
#include "tests/support/difference.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/reference_int8.h"

namespace octet {
namespace {

// What each (case, backend) came to, for the closing table.
std::map<std::pair<size_t, size_t>, char> outcomes;

class BackendOps : public ::testing::TestWithParam<std::tuple<size_t, size_t>> {};

TEST_P(BackendOps, MatchesTheReferenceBitForBit) {
  const auto [case_index, backend_index] = GetParam();
  const OpCase& c = op_cases()[case_index];
  const BackendRunner& backend = backend_runners()[backend_index];
  char& outcome = outcomes[{case_index, backend_index}];
  if (const std::string why = backend.why_unavailable(); !why.empty()) {
    outcome = 's';
    GTEST_SKIP() << backend.name << ": " << why;
  }
  const QuantizedModel model = c.model();
  if (const std::string why = backend.why_unsupported(model); !why.empty()) {
    outcome = 's';  // the reason first, alone on its line (ctest_summary.py groups skips by it), then where
    GTEST_SKIP() << backend.name << ": " << why.substr(0, why.find(", at node")) << "\n" << why;
  }
  outcome = 'F';
  const std::vector<ActShape> shapes = model.graph.shapes();
  const int64_t batch = backend.max_batch > 0 ? std::min(c.batch, backend.max_batch) : c.batch;
  const std::vector<float> images = case_images(c, shapes[0], batch, 7);
  const ReferenceRun reference = reference_run(model, images.data(), batch);
  const BackendOutputs out = backend.run(model, images, batch);

  ASSERT_EQ(out.values.size(), model.graph.nodes.size());
  for (int i = 0; i < model.graph.first_output(); ++i) {
    const Node& n = model.graph.nodes[i];
    // The runtimes flatten NHWC values as they lie (the next linear's weights
    // are permuted to match); the reference flattens NCHW, like torch.
    const int value = n.op == Op::Flatten ? n.inputs[0] : i;
    // The reference sizes its values itself: a shape rule the runtimes plan with must agree.
    const ActShape s = shapes[value];
    ASSERT_EQ(reference.values[value].shape, (Shape{batch, s.c, s.h, s.w}))
        << "node " << value << " '" << model.graph.nodes[value].name << "': the reference's shape differs from "
        << "the shape rule's";
    ASSERT_EQ(difference(nchw_to_nhwc(reference.values[value]).data, out.values[i], shapes[value]), "")
        << "node " << i << " '" << n.name << "' (" << op_name(n.op) << ", " << to_string(shapes[i]) << ") at batch "
        << batch << " on " << backend.name;
  }
  ASSERT_FALSE(out.logits.empty());
  for (const auto& [label, outputs] : out.logits) {
    ASSERT_EQ(outputs.size(), reference.outputs.size()) << "outputs " << label << " on " << backend.name;
    for (size_t k = 0; k < outputs.size(); ++k)
      ASSERT_EQ(difference(reference.outputs[k].data, outputs[k].data, shapes[model.graph.first_output() + k]), "")
          << "logits of output " << k << " " << label << " on " << backend.name;
  }
  outcome = '.';
}

std::string backend_label(size_t index) {
  std::string name = backend_runners()[index].name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, BackendOps,
                         ::testing::Combine(::testing::Range<size_t>(0, op_cases().size()),
                                            ::testing::Range<size_t>(0, backend_runners().size())),
                         [](const ::testing::TestParamInfo<BackendOps::ParamType>& info) {
                           return op_cases()[std::get<0>(info.param)].name + "_" +
                                  backend_label(std::get<1>(info.param));
                         });

// Adding an operator means adding its cases: every operator a quantized
// graph can hold appears in the table.
TEST(BackendOpsTable, CoversEveryOperator) {
  std::set<Op> covered;
  for (const OpCase& c : op_cases()) {
    if (c.images == CaseImages::Normalised) continue;  // networks do not count: each op needs its own shapes
    for (const Node& n : c.model().graph.nodes) covered.insert(n.op);
  }
  for (const OpDef* def : all_op_defs()) {
    if (!def->traits.training_only) {
      EXPECT_TRUE(covered.count(def->traits.op)) << "no case exercises '" << def->traits.name << "'";
    }
  }
}

// The float and LibTorch checks choose their cases by OpCase::fused_residual
// without building the models: it must say what each model holds.
TEST(BackendOpsTable, EveryCaseSaysWhetherItFusesAResidual) {
  for (const OpCase& c : op_cases()) EXPECT_EQ(c.fused_residual, has_fused_residual(c.model().graph)) << c.name;
}

// The closing table when more than one case ran in this process: a row per
// case, a column per backend ('.' equal, 'F' different, 's' skipped).
class OutcomeTable : public ::testing::EmptyTestEventListener {
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    std::set<size_t> rows;
    for (const auto& [key, outcome] : outcomes) rows.insert(key.first);
    if (rows.size() < 2) return;
    const std::vector<BackendRunner>& backends = backend_runners();
    size_t width = 4;
    for (size_t r : rows) width = std::max(width, op_cases()[r].name.size());
    std::printf("\n%-*s", static_cast<int>(width), "case");
    for (size_t b = 0; b < backends.size(); ++b) std::printf("  %c", 'A' + static_cast<int>(b));
    std::printf("\n");
    std::map<char, int> totals;
    for (size_t r : rows) {
      std::printf("%-*s", static_cast<int>(width), op_cases()[r].name.c_str());
      for (size_t b = 0; b < backends.size(); ++b) {
        const auto it = outcomes.find({r, b});
        const char outcome = it == outcomes.end() ? ' ' : it->second;
        ++totals[outcome];
        std::printf("  %c", outcome);
      }
      std::printf("\n");
    }
    for (size_t b = 0; b < backends.size(); ++b) {
      const std::string why = backends[b].why_unavailable();
      std::printf("%c = %s%s\n", 'A' + static_cast<int>(b), backends[b].name.c_str(),
                  why.empty() ? "" : (" (skipped: " + why + ")").c_str());
    }
    std::printf("cases x backends: %d equal to the reference, %d different, %d skipped\n", totals['.'], totals['F'],
                totals['s']);
  }
};

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new octet::OutcomeTable);
  return RUN_ALL_TESTS();
}
