// The CPU engine's entry points for the quantizer's `auto` search
// (runtime/cpu/cpu_engine.h): running a range of nodes from kept int8 outputs,
// and an engine that shares another's packed weights. Both must give the
// bits of a whole run of the model's own engine.
#include <gtest/gtest.h>

#include "common/error.h"
#include "runtime/cpu/cpu_engine.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

constexpr int64_t kBatch = 3;

struct WholeRun {
  std::vector<std::vector<int8_t>> values;  // every node's int8 output
  Int32Tensor logits;
};

WholeRun run_whole(const CpuEngine& engine, const std::vector<float>& images) {
  WholeRun r;
  r.values.resize(engine.model().graph.nodes.size());
  r.logits = engine.run(images.data(), kBatch, [&](int node, const int8_t* v, int64_t count) {
    r.values[node].assign(v, v + count);
  });
  return r;
}

TEST(CpuEnginePartial, RunningFromAnyNodeOnKeptOutputsGivesTheWholeRunsBits) {
  const QuantizedModel model =
      quantize_random(random_checkpoint("resnet20", ModelOptions{}, 31), quick_quantize_options(), 16);
  const CpuEngine engine(model);
  const std::vector<float> images = random_images(kBatch, model.graph.shapes()[0], 5);
  const WholeRun whole = run_whole(engine, images);
  const int nodes = static_cast<int>(model.graph.nodes.size());
  const auto given = [&](int node) { return whole.values[node].data(); };
  for (int first = 0; first < nodes; ++first) {
    std::vector<std::vector<int8_t>> seen(nodes);
    const Int32Tensor logits = engine.run_nodes(images.data(), kBatch, first, nodes, given,
                                                [&](int node, const int8_t* v, int64_t count) {
                                                  seen[node].assign(v, v + count);
                                                });
    EXPECT_EQ(logits.data, whole.logits.data) << "from node " << first;
    for (int i = first; i + 1 < nodes; ++i) EXPECT_EQ(seen[i], whole.values[i]) << "node " << i << " from " << first;
  }
  // A range that stops before the output returns no logits and runs nothing past its end.
  std::vector<bool> ran(nodes, false);
  const Int32Tensor none = engine.run_nodes(images.data(), kBatch, 0, nodes / 2, {},
                                            [&](int node, const int8_t*, int64_t) { ran[node] = true; });
  EXPECT_EQ(none.numel(), 0);
  for (int i = 0; i < nodes; ++i) EXPECT_EQ(ran[i], i < nodes / 2) << "node " << i;
  EXPECT_THROW(engine.run_nodes(images.data(), kBatch, 2, 1, given), Error);
  EXPECT_THROW(engine.run_nodes(images.data(), kBatch, 2, nodes, {}), Error);  // nothing given for nodes before 2
}

// What a kernel prepares may hold the weights only: every other parameter
// changes with the activation scales. Dense, grouped and depthwise convs (the
// last also on the AVX-512 path where the CPU has it), residual adds, and the
// table activations (hard-swish, hard-sigmoid, SiLU, leaky ReLU), whose
// tables were once prepared (and stale in `auto`'s candidate engines).
TEST(CpuEnginePartial, SharedPackedWeightsRunLikeTheModelsOwnEngine) {
  for (const Checkpoint& checkpoint : {random_checkpoint("resnet20", ModelOptions{}, 32), random_grouped_checkpoint(32),
                                       random_imagenet_ops_checkpoint(32)}) {
    QuantizeOptions other_scales = quick_quantize_options();
    other_scales.method = AmaxMethod::Percentile;  // other activation scales, the same rounded weights
    const QuantizedModel a = quantize_random(checkpoint, quick_quantize_options(), 16);
    const QuantizedModel b = quantize_random(checkpoint, other_scales, 16);
    const std::vector<float> images = random_images(kBatch, a.graph.shapes()[0], 6);
    const CpuEngine packed(a);
    const Int32Tensor own = CpuEngine(b).run(images.data(), kBatch);
    EXPECT_NE(own.data, packed.run(images.data(), kBatch).data) << checkpoint.model << ": the scales should change the logits";
    EXPECT_EQ(CpuEngine(b, packed).run(images.data(), kBatch).data, own.data) << checkpoint.model;
  }
  const Checkpoint checkpoint = random_checkpoint("resnet20", ModelOptions{}, 32);
  const QuantizedModel b = quantize_random(checkpoint, quick_quantize_options(), 16);
  const CpuEngine packed(b);

  QuantizedModel changed = b;
  for (NodeQuant& q : changed.quant)
    if (q.weight.numel() > 0) {
      q.weight.data[0] = static_cast<int8_t>(q.weight.data[0] == 1 ? 2 : 1);
      break;
    }
  try {
    CpuEngine shared(changed, packed);
    FAIL() << "an engine shared weights it does not have";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differ from the packed model's"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace octet
