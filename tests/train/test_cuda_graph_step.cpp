// --cuda-graph: its optimizer (SGD with the rate in a device tensor, so that
// a replayed step reads the rate of its own step) against LibTorch's SGD on
// the CPU, and on a GPU the captured training step against the eager one.
#include <gtest/gtest.h>

#include <sstream>

#include "common/file_io.h"
#include "tests/support/test_util.h"
#include "train/optimizer.h"
#include "train/trainer.h"

namespace octet {
namespace {

// Five steps of random gradients, the rate changed before each, on two
// parameters; returns the parameters after them.
template <typename Step>
std::vector<torch::Tensor> five_steps(Step&& make_and_step) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params = {torch::randn({4, 3}).requires_grad_(), torch::randn({5}).requires_grad_()};
  std::vector<std::vector<torch::Tensor>> grads;
  for (int step = 0; step < 5; ++step) grads.push_back({torch::randn({4, 3}), torch::randn({5})});
  make_and_step(params, grads);
  return params;
}

void expect_same_steps(const OptimizerOptions& o) {
  const double rates[] = {0.1, 0.05, 0.2, 0.01, 0.3};
  const auto run = [&](bool graph_safe) {
    return five_steps([&](std::vector<torch::Tensor>& params, const std::vector<std::vector<torch::Tensor>>& grads) {
      const auto optimizer = graph_safe ? make_graph_safe_optimizer(o, params) : make_optimizer(o, params);
      for (size_t step = 0; step < grads.size(); ++step) {
        optimizer->zero_grad();
        for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads[step][i].clone();
        optimizer->set_lr(rates[step]);
        optimizer->step();
      }
    });
  };
  const std::vector<torch::Tensor> expected = run(false), got = run(true);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_TRUE(torch::allclose(got[i], expected[i], 1e-6, 1e-6)) << o.name << " parameter " << i << "\n"
                                                                    << got[i] << "\n"
                                                                    << expected[i];
}

TEST(GraphSafeSgd, StepsAsLibTorchSgdDoes) {
  OptimizerOptions o;
  o.name = "sgd";
  o.momentum = 0.9;
  o.weight_decay = 5e-4;
  expect_same_steps(o);
  o.name = "nesterov";
  expect_same_steps(o);
  o.name = "sgd";
  o.momentum = 0;
  expect_same_steps(o);
}

TEST(GraphSafeSgd, ZeroesGradientsInPlaceAndRefusesOtherOptimizers) {
  OptimizerOptions o;
  o.name = "sgd";
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  const auto optimizer = make_graph_safe_optimizer(o, {w});
  w.mutable_grad() = torch::full({3}, 2.0);
  const void* address = w.grad().data_ptr();
  optimizer->zero_grad();
  EXPECT_EQ(w.grad().data_ptr(), address);  // a captured graph keeps writing there
  EXPECT_TRUE(torch::equal(w.grad(), torch::zeros({3})));
  for (const char* name : {"adam", "adagrad", "adadelta"}) {
    o.name = name;
    const std::string message = error_of([&] { make_graph_safe_optimizer(o, {w}); });
    EXPECT_NE(message.find("--cuda-graph needs --optimizer sgd or nesterov"), std::string::npos) << message;
    EXPECT_NE(message.find(name), std::string::npos) << message;
  }
}

TEST(GraphSafeSgd, CudaGraphIsRefusedOnTheCpu) {
  TrainOptions o;
  o.data_dir = fashion_mnist_dir();
  o.cuda_graph = true;
  std::ostringstream log;
  const std::string message = error_of([&] { train(o, log); });
  EXPECT_NE(message.find("--cuda-graph needs --device cuda"), std::string::npos) << message;
}

// LeNet-5 on CIFAR-10 (which the GPU machine has; Fashion-MNIST does not fit
// its calls beside it), two epochs of 51 steps (the last of each 20 images:
// run eagerly), the rate ramping up over the first epoch (a rate frozen at
// the capture's step would train far slower), with the step captured and
// without.
TrainReport lenet_on_gpu(bool cuda_graph, const std::string& step_log) {
  TrainOptions o;
  o.model = "lenet5";
  o.dataset = "cifar10";
  o.data_dir = cifar10_dir();
  o.device = "cuda";
  o.epochs = 2;
  o.batch_size = 64;
  o.train_limit = 64 * 50 + 20;
  o.optimizer.lr = 0.05;
  o.optimizer.momentum = 0.9;
  o.warmup_epochs = 1;
  o.schedule = "constant";
  o.cuda_graph = cuda_graph;
  o.step_log = step_log;
  std::ostringstream log;
  return train(o, log);
}

double mean_loss(const std::vector<double>& losses, size_t first, size_t count) {
  double sum = 0;
  for (size_t i = first; i < first + count; ++i) sum += losses.at(i);
  return sum / static_cast<double>(count);
}

TEST(CudaGraphStep, TrainsAsTheEagerStepDoes) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device: LibTorch sees none";
  if (!path_exists(cifar10_dir())) GTEST_SKIP() << "no CIFAR-10 in " << cifar10_dir();
  TempDir dir;
  const TrainReport eager = lenet_on_gpu(false, dir.path("eager.csv"));
  const TrainReport graph = lenet_on_gpu(true, dir.path("graph.csv"));
  const std::vector<double> eager_losses = step_log_losses(dir.path("eager.csv"));
  const std::vector<double> graph_losses = step_log_losses(dir.path("graph.csv"));
  ASSERT_EQ(graph_losses.size(), 102u);
  ASSERT_EQ(eager_losses.size(), 102u);
  // The eager steps before the capture: the same weights, up to rounding.
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(graph_losses[i], eager_losses[i], 1e-3 * eager_losses[i]) << i;
  for (const size_t first : {20u, 50u, 82u}) {
    const double expected = mean_loss(eager_losses, first, 20);
    EXPECT_NEAR(mean_loss(graph_losses, first, 20), expected, 0.05 * expected) << "steps from " << first;
  }
  // Eager on the CPU, seeds 1 and 2: 25.5% and 27.3% after these 102 steps (chance: 10%).
  EXPECT_NEAR(graph.final_test_top1, eager.final_test_top1, 3.0);
  EXPECT_GT(graph.final_test_top1, 20.0);
}

}  // namespace
}  // namespace octet
