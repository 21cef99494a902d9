// The training step's precision levers on the CPU: bfloat16 autocast and
// channels-last layout train as fp32 does; the float16 loss scaler skips
// overflowing steps. (tf32 and amp-fp16 need CUDA.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "models/registry.h"
#include "tests/support/test_util.h"
#include "train/graph_net.h"
#include "train/loss_scaler.h"
#include "train/precision.h"
#include "train/trainer.h"

namespace octet {
namespace {

// Mean step loss of the last `n` steps of a step log.
double final_loss(const std::string& csv, int n) {
  const std::vector<double> losses = step_log_losses(csv);
  double sum = 0;
  for (size_t i = losses.size() - static_cast<size_t>(n); i < losses.size(); ++i) sum += losses[i];
  return sum / n;
}

TrainReport lenet_run(const std::string& precision, bool channels_last, const std::string& step_log) {
  TrainOptions o;
  o.model = "lenet5";
  o.dataset = "fashion-mnist";
  o.data_dir = fashion_mnist_dir();
  o.epochs = 1;
  o.batch_size = 64;
  o.optimizer.lr = 0.05;
  o.schedule = "constant";
  o.max_steps = 300;
  o.threads = 1;
  o.precision = precision;
  o.channels_last = channels_last;
  o.step_log = step_log;
  std::ostringstream log;
  return train(o, log);
}

TEST(Precision, Bf16AutocastAndChannelsLastTrainAsFp32Does) {
  TempDir dir;
  const TrainReport fp32 = lenet_run("fp32", false, dir.path("fp32.csv"));
  const TrainReport bf16 = lenet_run("amp-bf16", false, dir.path("bf16.csv"));
  const TrainReport nhwc = lenet_run("fp32", true, dir.path("nhwc.csv"));
  const double loss = final_loss(dir.path("fp32.csv"), 50);
  // Channels-last changes only the order of the sums: the same run up to rounding.
  EXPECT_NEAR(final_loss(dir.path("nhwc.csv"), 50), loss, 0.05 * loss);
  EXPECT_NEAR(nhwc.final_test_top1, fp32.final_test_top1, 1.5);
  // bfloat16 keeps 8 bits of mantissa: close, not equal.
  EXPECT_NE(read_text(dir.path("bf16.csv")), read_text(dir.path("fp32.csv")));
  EXPECT_NEAR(final_loss(dir.path("bf16.csv"), 50), loss, 0.15 * loss);
  EXPECT_NEAR(bf16.final_test_top1, fp32.final_test_top1, 3.0);
  EXPECT_GT(bf16.final_test_top1, 65.0);
}

TEST(Precision, ChannelsLastReordersTheModulesOwnWeights) {
  GraphNet net(build_model("lenet5", model_options_for("cifar10", false)));
  to_channels_last(net->parameters());
  int four_d = 0;
  for (const torch::Tensor& p : net->parameters()) {
    if (p.dim() != 4) continue;
    ++four_d;
    EXPECT_TRUE(p.is_contiguous(torch::MemoryFormat::ChannelsLast));
    EXPECT_FALSE(p.is_contiguous());
  }
  EXPECT_EQ(four_d, 2);  // LeNet-5's two convolutions
  EXPECT_TRUE(input_layout(torch::zeros({2, 3, 4, 4}), true).is_contiguous(torch::MemoryFormat::ChannelsLast));
}

TEST(Precision, LossScalerSkipsOverflowsHalvesAndGrows) {
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  LossScaler scaler(1024.0, 2);
  const auto step = [&](double value) {
    w.mutable_grad() = torch::full({3}, value);
    return scaler.unscale({w});
  };
  EXPECT_DOUBLE_EQ(scaler.scale(torch::tensor(2.0)).item<double>(), 2048.0);
  EXPECT_TRUE(step(512.0));
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 0.5)));  // unscaled
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 1024.0);
  EXPECT_TRUE(step(1.0));  // a second good step in a row: the scale doubles
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 2048.0);
  EXPECT_FALSE(step(std::numeric_limits<double>::infinity()));
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 1024.0);
  EXPECT_FALSE(step(std::nan("")));
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512.0);
  EXPECT_TRUE(step(1.0));  // one good step after an overflow: no growth yet
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512.0);
}

TEST(Precision, CudaOnlyLeversAreRefusedOnTheCpu) {
  TrainOptions o;
  o.data_dir = fashion_mnist_dir();
  std::ostringstream log;
  for (const char* precision : {"tf32", "amp-fp16"}) {
    o.precision = precision;
    const std::string message = error_of([&] { train(o, log); });
    EXPECT_NE(message.find("needs --device cuda"), std::string::npos) << message;
  }
  o.precision = "fp8";
  EXPECT_NE(error_of([&] { train(o, log); }).find("--precision must be"), std::string::npos);
}

}  // namespace
}  // namespace octet
