// Load-time proof of the integer arithmetic: a quantized model whose int32
// accumulators (128 x sum |weight| + |bias| per output channel) could leave
// int32 is refused naming the layer, and one exactly at the bound runs on the
// CPU runtime without overflowing (the sanitizer build, tools/setup.sh
// sanitize, would report signed overflow) and equals the naive reference.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/safetensors.h"
#include "runtime/cpu/engine.h"
#include "tests/random_model.h"
#include "tests/reference_int8.h"
#include "tests/test_util.h"

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

TEST_F(LoadBounds, AModelAtTheBoundRunsExactly) {
  const QuantizedModel at_bound =
      load_quantized_model(with_conv1_bias(static_cast<int32_t>(kInt32Max - weight_bound())));
  const CpuEngine engine(at_bound);
  const ActShape in = at_bound.graph.shapes()[0];
  // Saturated inputs (+-128 after quantization) with random signs, and random images.
  std::vector<float> images = random_images(4, in, 9);
  for (size_t i = 0; i < images.size() / 2; ++i) images[i] = images[i] < 0 ? -1e6f : 1e6f;
  EXPECT_EQ(engine.run(images.data(), 4).data, reference_run(at_bound, images.data(), 4).logits.data);
}

}  // namespace
}  // namespace octet
