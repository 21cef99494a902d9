// The CUDA runtime's memory plan, checked on the host without nvcc or a GPU.
// (The device layout's values themselves are compared with the reference for
// every operator by test_backend_ops' host-layout backends.)
#include <gtest/gtest.h>

#include "runtime/cuda/device_layout.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

// Values alive at the same time never share bytes; every buffer is aligned;
// reuse makes ResNet-20's arena over 3 times smaller than one buffer each
// (about 3 stage-1 activations are alive at once, out of 20 values).
TEST(CudaDeviceLayout, ArenaSeparatesLiveValuesAndReusesDeadOnes) {
  const QuantizedModel model =
      quantize_random(random_checkpoint("resnet20", ModelOptions{}, 23), quick_quantize_options(), 8);
  const Graph& g = model.graph;
  const cuda::ValueLayout layout = cuda::plan_values(g, g.shapes(), "test", cuda::kDp4aChannelAlignment);
  const int64_t batch = 5;
  const cuda::ArenaPlan reuse = cuda::plan_arena(g, layout, batch, false);
  const cuda::ArenaPlan separate = cuda::plan_arena(g, layout, batch, true);
  for (int u = 0; u < model.output(); ++u) {
    if (layout.owner[u] != u) continue;
    EXPECT_EQ(reuse.offset[u] % cuda::kBufferAlignment, 0);
    for (int reader = u + 1; reader <= model.output(); ++reader)
      for (int in : g.nodes[reader].inputs) {
        if (layout.owner[in] == u) {
          EXPECT_GE(reuse.last_use[u], reader) << g.nodes[u].name;
        }
      }
    for (int v = u + 1; v < model.output(); ++v) {
      if (layout.owner[v] != v || v > reuse.last_use[u]) continue;  // v is written after u's last reader
      const int64_t u_end = reuse.offset[u] + batch * layout.storage[u].bytes();
      const int64_t v_end = reuse.offset[v] + batch * layout.storage[v].bytes();
      EXPECT_TRUE(u_end <= reuse.offset[v] || v_end <= reuse.offset[u])
          << g.nodes[u].name << " and " << g.nodes[v].name << " overlap while both are alive";
    }
  }
  EXPECT_LT(reuse.bytes * 3, separate.bytes);
}

}  // namespace
}  // namespace octet
