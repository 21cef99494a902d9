// Unsigned activations (QuantizeOptions::unsigned_activations): every tensor
// that cannot be negative (quant/non_negative.h) is stored with zero point
// -128 at scale 255 / amax, every other at zero point 0 and 127 / amax, and
// the nodes that keep their input's scale keep its zero point too. On the
// network of every operator issue 40's CNNs bring.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "graph/op_traits.h"
#include "quant/non_negative.h"
#include "runtime/cuda/op_support.h"
#include "runtime/engine.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

TEST(UnsignedActivations, NonNegativeTensorsUseAllLevelsAndTheRestStaySigned) {
  QuantizeOptions options = quick_quantize_options();
  options.unsigned_activations = true;
  const QuantizedModel m = quantize_random(random_imagenet_ops_checkpoint(3), options, 32);
  const std::vector<bool> non_negative = non_negative_outputs(m.graph);
  int unsigned_points = 0, signed_points = 0;
  for (size_t i = 0; i + 1 < m.graph.nodes.size(); ++i) {
    const Node& n = m.graph.nodes[i];
    const NodeQuant& q = m.quant[i];
    if (i > 0 && !op_traits(n.op).owns_scale) {
      EXPECT_EQ(q.zero_point, m.quant[n.inputs[0]].zero_point) << n.name;
      continue;
    }
    const bool stored_unsigned = q.zero_point == -128;
    EXPECT_EQ(stored_unsigned, bool(non_negative[i])) << n.name;
    EXPECT_TRUE(q.zero_point == 0 || stored_unsigned) << n.name;
    EXPECT_NEAR(q.scale * q.amax, stored_unsigned ? 255.0 : 127.0, 1e-3) << n.name;
    (stored_unsigned ? unsigned_points : signed_points) += 1;
    // What the structure says, by operator.
    if (n.relu) {
      EXPECT_TRUE(stored_unsigned) << n.name;
    }
    if (n.op == Op::Input) {
      EXPECT_FALSE(stored_unsigned);
    }
    if (n.op == Op::Activation) {
      EXPECT_EQ(stored_unsigned, n.function == "sigmoid" || n.function == "hard_sigmoid" ||
                                     (n.function == "clip" && n.alpha >= 0))
          << n.name << " (" << n.function << ")";
    }
  }
  EXPECT_GT(unsigned_points, 3);
  EXPECT_GT(signed_points, 3);
  EXPECT_EQ(m.quant[m.output()].zero_point, 0);

  // Signed activations: no zero point anywhere.
  EXPECT_FALSE(quantize_random(random_imagenet_ops_checkpoint(3), quick_quantize_options(), 32).has_zero_points());
}

// The CUDA runtime stores zero point -128 as uint8 (runtime/cuda/stored_value.h)
// and refuses any other but 0 by name.
TEST(UnsignedActivations, CudaBackendsReadZeroPointMinus128AndRefuseOthersByName) {
  QuantizeOptions options = quick_quantize_options();
  options.unsigned_activations = true;
  const Checkpoint lenet = random_checkpoint("lenet5", ModelOptions{1, 28, 28}, 4);
  QuantizedModel m = quantize_random(lenet, options, 16);
  ASSERT_TRUE(m.has_zero_points());
  EXPECT_EQ(cuda::why_model_unsupported(m), "");
  const int conv1 = m.graph.find("conv1");
  ASSERT_EQ(m.quant[conv1].zero_point, -128);
  m.quant[conv1].zero_point = -37;
  const std::string why = cuda::why_model_unsupported(m);
  EXPECT_NE(why.find("node 'conv1' (conv2d) has zero point -37"), std::string::npos) << why;
  EXPECT_NE(why.find("run it with the cpu backend"), std::string::npos) << why;
}

// cuda-cublaslt's s8 x s8 GEMMs: a layer reading an unsigned tensor is refused by name.
TEST(UnsignedActivations, CublasLtRefusesALayerReadingAnUnsignedTensor) {
  QuantizeOptions options = quick_quantize_options();
  options.unsigned_activations = true;
  const Checkpoint lenet = random_checkpoint("lenet5", ModelOptions{1, 28, 28}, 4);
  const QuantizedModel m = quantize_random(lenet, options, 16);
  const std::string why = cuda::why_model_unsupported_on(backend_names::kCudaCublasLt, m);  // the registry's question
  EXPECT_NE(why.find("cuBLASLt multiplies signed int8 only, and node 'conv2' (conv2d) reads a tensor with zero point "
                     "-128"),
            std::string::npos)
      << why;
  EXPECT_EQ(cuda::why_cublaslt_cannot_run(m, m.graph.find("conv1")), "");  // it reads the image, signed
  EXPECT_EQ(cuda::why_model_unsupported_on(backend_names::kCudaImma, m), "");
  EXPECT_EQ(cuda::why_model_unsupported_on(backend_names::kCudaDp4a, m), "");
  EXPECT_THROW(cuda::why_model_unsupported_on(backend_names::kCpu, m), Error);
  EXPECT_EQ(cuda::why_model_unsupported_on_cublaslt(quantize_random(lenet, quick_quantize_options(), 16)), "");
}

}  // namespace
}  // namespace octet
