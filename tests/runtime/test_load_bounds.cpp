// Load-time proof of the integer arithmetic: a quantized model whose int32
// accumulators (128 x sum |weight| + |bias| per output channel) could leave
// int32 is refused naming the layer, and one exactly at the bound runs on the
// CPU runtime without overflowing (the sanitizer build, tools/setup.sh
// sanitize, would report signed overflow) and equals the naive reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "common/requantize.h"
#include "common/safetensors.h"
#include "runtime/cpu/cpu_engine.h"
#include "tests/support/random_model.h"
#include "tests/ops/reference_int8.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

constexpr int64_t kInt32Max = 2147483647;

class LoadBounds : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = quantize_random(random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 5), quick_quantize_options(),
                             16);
    save_quantized_model(model_, dir_.path("good.octet"));
  }
  // 128 x sum |weight| of conv1's output channel 0.
  int64_t weight_bound() const {
    const NodeQuant& q = model_.quant[static_cast<size_t>(model_.graph.find("conv1"))];
    const int64_t depth = q.weight.numel() / q.weight.dim(0);
    int64_t sum = 0;
    for (int64_t k = 0; k < depth; ++k) sum += std::abs(int64_t{q.weight.data[k]});
    return 128 * sum;
  }
  // Writes the good file with conv1's bias of channel 0 set to `bias`.
  std::string with_conv1_bias(int32_t bias) {
    TensorFile file = TensorFile::load(dir_.path("good.octet"));
    Int32Tensor b = file.get<int32_t>("conv1.bias");
    b.data[0] = bias;
    file.put("conv1.bias", b);
    const std::string path = dir_.path("bias.octet");
    file.save(path);
    return path;
  }
  QuantizedModel model_;
  TempDir dir_;
};

TEST_F(LoadBounds, ABiasThatCouldOverflowTheAccumulatorIsRefusedNamingTheLayer) {
  for (const int32_t sign : {1, -1}) {
    const int32_t bias = static_cast<int32_t>(sign * (kInt32Max - weight_bound() + 1));
    const std::string msg = error_of([&] { load_quantized_model(with_conv1_bias(bias)); });
    EXPECT_NE(msg.find("node 'conv1': output channel 0 can accumulate 2147483648"), std::string::npos) << msg;
    EXPECT_NE(msg.find("its int32 accumulators could overflow"), std::string::npos) << msg;
  }
  // The saver refuses to write such a model too.
  QuantizedModel bad = model_;
  bad.quant[static_cast<size_t>(bad.graph.find("conv1"))].bias.data[0] =
      static_cast<int32_t>(kInt32Max - weight_bound() + 1);
  EXPECT_NE(error_of([&] { save_quantized_model(bad, dir_.path("never.octet")); }).find("could overflow"),
            std::string::npos);
  EXPECT_FALSE(file_exists(dir_.path("never.octet")));
}

// conv1's channel 0 at the bound: its weights all of one sign, its bias
// kInt32Max - 128 x sum |w| of the same sign, and every input -128 (an image
// of -1e6), so that each output whose 5x5 window lies inside the image
// accumulates 128 x sum |w| + |bias| = kInt32Max exactly, positive or
// negative. Its int8 output there is requantize(+-kInt32Max), on the CPU
// runtime as in the naive reference, and the logits agree.
TEST_F(LoadBounds, AModelAtTheBoundRunsExactly) {
  const int conv1 = model_.graph.find("conv1");
  const Node& n = model_.graph.nodes[static_cast<size_t>(conv1)];
  for (const int32_t sign : {1, -1}) {
    TensorFile file = TensorFile::load(dir_.path("good.octet"));
    Int8Tensor w = file.get<int8_t>("conv1.weight");
    const int64_t depth = w.numel() / w.dim(0);
    int64_t sum = 0;
    for (int64_t k = 0; k < depth; ++k) {
      const int8_t magnitude = static_cast<int8_t>(std::min(127, std::abs(int{w.data[k]})));
      w.data[k] = static_cast<int8_t>(-sign * magnitude);  // x w = 128 x |w| x sign for x = -128
      sum += magnitude;
    }
    ASSERT_GT(sum, 0);
    Int32Tensor b = file.get<int32_t>("conv1.bias");
    b.data[0] = static_cast<int32_t>(sign * (kInt32Max - 128 * sum));
    file.put("conv1.weight", w);
    file.put("conv1.bias", b);
    file.save(dir_.path("bound.octet"));
    const QuantizedModel at_bound = load_quantized_model(dir_.path("bound.octet"));

    const ActShape in = at_bound.graph.shapes()[0], out = at_bound.graph.shapes()[static_cast<size_t>(conv1)];
    const int64_t batch = 2;
    std::vector<float> images(static_cast<size_t>(batch * in.numel()), -1e6f);
    const NodeQuant& q = at_bound.quant[static_cast<size_t>(conv1)];
    const int8_t want = static_cast<int8_t>(
        requantize(static_cast<int32_t>(sign * kInt32Max), q.multiplier.data[0], 0, 0, q.shift.data[0], n.relu ? 0 : -128));
    std::vector<int8_t> conv1_out;
    const Int32Tensor logits =
        CpuEngine(at_bound).run(images.data(), batch, [&](int node, const int8_t* values, int64_t count) {
          if (node == conv1) conv1_out.assign(values, values + count);
        });
    const ReferenceRun reference = reference_run(at_bound, images.data(), batch);
    ASSERT_EQ(conv1_out.size(), static_cast<size_t>(batch * out.numel()));
    int at_bound_outputs = 0;
    for (int64_t image = 0; image < batch; ++image)
      for (int y = n.padding; y + n.padding < out.h; ++y)
        for (int x = n.padding; x + n.padding < out.w; ++x) {
          const size_t nhwc = static_cast<size_t>(((image * out.h + y) * out.w + x) * out.c);
          const size_t nchw = static_cast<size_t>(((image * out.c) * out.h + y) * out.w + x);
          ASSERT_EQ(int{conv1_out[nhwc]}, int{want}) << "sign " << sign << ", image " << image << " at " << y << "," << x;
          ASSERT_EQ(int{reference.values[static_cast<size_t>(conv1)].data[nchw]}, int{want}) << "reference";
          ++at_bound_outputs;
        }
    EXPECT_EQ(at_bound_outputs, batch * (out.h - 2 * n.padding) * (out.w - 2 * n.padding));
    EXPECT_EQ(logits.data, reference.logits.data) << "sign " << sign;
  }
}

// A conv reading a tensor stored unsigned (zero point -128) accumulates
// values less -128, up to 255: its bound is 255 x sum |weight| + |bias|.
TEST(LoadBoundsUnsigned, AnInputStoredUnsignedBoundsTheSumAt255TimesTheWeights) {
  QuantizeOptions options = quick_quantize_options();
  options.unsigned_activations = true;
  const Checkpoint lenet = random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 5);
  const QuantizedModel m = quantize_random(lenet, options, 16);
  const size_t conv2 = static_cast<size_t>(m.graph.find("conv2"));
  ASSERT_EQ(m.quant[static_cast<size_t>(m.graph.nodes[conv2].inputs[0])].zero_point, -128);
  const Int8Tensor& w = m.quant[conv2].weight;
  const int64_t depth = w.numel() / w.dim(0);
  int64_t sum = 0;
  for (int64_t k = 0; k < depth; ++k) sum += std::abs(int64_t{w.data[k]});
  QuantizedModel at_bound = m, past = m;
  at_bound.quant[conv2].bias.data[0] = static_cast<int32_t>(kInt32Max - 255 * sum);
  past.quant[conv2].bias.data[0] = static_cast<int32_t>(kInt32Max - 255 * sum + 1);
  EXPECT_NO_THROW(at_bound.validate());
  const std::string msg = error_of([&] { past.validate(); });
  EXPECT_NE(msg.find("node 'conv2': output channel 0 can accumulate 2147483648 (255 x sum |weight|"), std::string::npos)
      << msg;
}

}  // namespace
}  // namespace octet
