// A short real training run, checkpoints, and the float inference graph
// against the LibTorch module it was exported from.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "data/dataset.h"
#include "graph/float_executor.h"
#include "models/checkpoint.h"
#include "models/registry.h"
#include "tests/support/test_util.h"
#include "train/graph_net.h"
#include "train/trainer.h"

namespace octet {
namespace {

TrainOptions lenet_on_fashion_mnist(int epochs, int batch_size) {
  TrainOptions o;
  o.model = "lenet5";
  o.dataset = "fashion-mnist";
  o.data_dir = fashion_mnist_dir();
  o.epochs = epochs;
  o.batch_size = batch_size;
  return o;
}

TEST(Trainer, AFewHundredFashionMnistStepsLowerTheLoss) {
  TempDir dir;
  TrainOptions o = lenet_on_fashion_mnist(1, 64);
  o.optimizer.name = "sgd";
  o.optimizer.lr = 0.05;
  o.schedule = "constant";
  o.max_steps = 300;
  o.workers = 2;
  o.step_log = dir.path("steps.csv");
  o.checkpoint = dir.path("lenet.octet");
  std::ostringstream log;
  const TrainReport report = train(o, log);
  ASSERT_EQ(report.epochs.size(), 1u);
  EXPECT_EQ(report.epochs[0].steps, 300);

  std::ifstream csv(o.step_log);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "epoch,step,loss,acc");
  std::vector<double> losses;
  while (std::getline(csv, line)) losses.push_back(std::stod(line.substr(line.find(',', 2) + 1)));
  ASSERT_EQ(losses.size(), 300u);
  double first = 0, last = 0;
  for (int i = 0; i < 30; ++i) {
    first += losses[i] / 30;
    last += losses[losses.size() - 1 - i] / 30;
  }
  EXPECT_LT(last, 0.6 * first) << "mean loss of the first 30 steps " << first << ", last 30 " << last;
  EXPECT_GT(report.final_test_top1, 65.0);
  EXPECT_NE(log.str().find("test top-1"), std::string::npos);

  const Checkpoint c = load_checkpoint(o.checkpoint);
  EXPECT_EQ(c.model, "lenet5");
  EXPECT_EQ(c.dataset, "fashion-mnist");
  EXPECT_EQ(c.classes.size(), 10u);
}

GraphNet random_net(const std::string& model, bool batch_norm, int channels = 3, int size = 32) {
  const ModelOptions o{channels, size, size, 10, batch_norm};
  torch::manual_seed(3);
  GraphNet net(build_model(model, o));
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : net->named_state()) {  // non-trivial batch-norm statistics
    if (name.find("running_var") != std::string::npos) t.uniform_(0.5, 2.0);
    if (name.find("running_mean") != std::string::npos) t.uniform_(-0.2, 0.2);
    if (name.find("bn") != std::string::npos && name.find(".bias") != std::string::npos) t.uniform_(-0.1, 0.1);
  }
  net->eval();
  return net;
}

Checkpoint checkpoint_of(GraphNet& net, const std::string& model) {
  Checkpoint c;
  c.model = model;
  c.dataset = "cifar10";
  c.graph = net->graph();
  c.classes = dataset_info("cifar10").classes;
  c.mean = {0.5f, 0.5f, 0.5f};
  c.std = {0.25f, 0.25f, 0.25f};
  c.params = net->export_state();
  return c;
}

// An interrupted run resumed from its checkpoint ends with the same weights
// as an uninterrupted one (plain SGD keeps no optimizer state, one thread keeps
// LibTorch deterministic), and its step log and report cover every epoch once.
TEST(Trainer, SampleLimitsShrinkBothSplits) {
  TrainOptions o = lenet_on_fashion_mnist(1, 100);
  o.train_limit = 500;
  o.test_limit = 250;
  o.threads = 1;
  std::ostringstream log;
  const TrainReport report = train(o, log);
  EXPECT_NE(log.str().find("(500 train / 250 test images)"), std::string::npos) << log.str();
  EXPECT_EQ(report.epochs.at(0).steps, 5);
  const double correct = report.final_test_top1 * 250 / 100;  // a whole count of 250 images
  EXPECT_NEAR(correct, std::round(correct), 1e-9);
}

TEST(Trainer, ResumedRunMatchesAnUninterruptedOne) {
  TempDir dir;
  TrainOptions o = lenet_on_fashion_mnist(2, 100);
  o.train_limit = 1000;
  o.optimizer.momentum = 0;
  o.optimizer.lr = 0.05;
  o.threads = 1;
  std::ostringstream log;

  TrainOptions straight = o;
  straight.checkpoint = dir.path("straight.octet");
  train(straight, log);

  TrainOptions interrupted = o;
  interrupted.checkpoint = dir.path("resumed.octet");
  interrupted.step_log = dir.path("steps.csv");
  interrupted.max_steps = 10;  // one epoch of 1000 / 100
  ASSERT_EQ(train(interrupted, log).epochs.size(), 1u);
  { std::ofstream(interrupted.step_log, std::ios::app) << "2,11,9.9,0\n"; }  // a row of the lost epoch

  TrainOptions resumed = interrupted;
  resumed.max_steps = 0;
  resumed.resume = interrupted.checkpoint;
  const TrainReport report = train(resumed, log);
  ASSERT_EQ(report.epochs.size(), 2u);
  EXPECT_EQ(report.epochs[0].epoch, 1);
  EXPECT_EQ(report.epochs[1].epoch, 2);
  EXPECT_NE(log.str().find("resuming after epoch 1"), std::string::npos);

  const Checkpoint a = load_checkpoint(straight.checkpoint), b = load_checkpoint(resumed.checkpoint);
  for (const auto& [name, tensor] : a.params) EXPECT_EQ(tensor.data, b.param(name).data) << name;

  std::ifstream csv(resumed.step_log);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "epoch,step,loss,acc");
  int expected_step = 0;
  while (std::getline(csv, line)) {
    ++expected_step;
    EXPECT_EQ(std::stoi(line.substr(line.find(',') + 1)), expected_step) << line;
  }
  EXPECT_EQ(expected_step, 20);

  TrainOptions other_lr = resumed;
  other_lr.optimizer.lr = 0.1;
  std::string message = error_of([&] { train(other_lr, log); });
  EXPECT_NE(message.find("checkpoint was trained with --lr 0.05"), std::string::npos) << message;

  TrainOptions other_init = resumed;
  other_init.init = straight.checkpoint;
  message = error_of([&] { train(other_init, log); });
  EXPECT_NE(message.find("started from --init ''"), std::string::npos) << message;

  TrainOptions other_model = o;
  other_model.model = "resnet20";
  other_model.init = resumed.checkpoint;
  message = error_of([&] { train(other_model, log); });
  EXPECT_NE(message.find("checkpoint holds lenet5"), std::string::npos) << message;
}

TEST(Checkpoint, RoundTripGivesIdenticalOutputs) {
  TempDir dir;
  GraphNet net = random_net("resnet20", true);
  save_checkpoint(checkpoint_of(net, "resnet20"), dir.path("r20.octet"));
  const Checkpoint loaded = load_checkpoint(dir.path("r20.octet"));
  GraphNet copy(loaded.graph);
  copy->import_state(loaded.params);
  copy->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({4, 3, 32, 32});
  EXPECT_TRUE(torch::equal(net->forward(x), copy->forward(x)));
}

TEST(Checkpoint, RefusesFilesThatAreNotCheckpoints) {
  TempDir dir;
  GraphNet net = random_net("lenet5", false);
  save_checkpoint(checkpoint_of(net, "lenet5"), dir.path("good.octet"));
  const std::vector<uint8_t> good = read_bytes(dir.path("good.octet"));
  auto write = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream(dir.path(name), std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                           static_cast<std::streamsize>(bytes.size()));
    return dir.path(name);
  };
  auto load_error = [](const std::string& path) { return error_of([&] { load_checkpoint(path); }); };
  const std::string truncated = load_error(write("truncated.octet", {good.begin(), good.begin() + good.size() / 2}));
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
  const std::string text = load_error(write("text.octet", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'}));
  EXPECT_NE(text.find("text.octet"), std::string::npos) << text;
  EXPECT_NE(load_error(write("empty.octet", {})).find("too short"), std::string::npos);
  EXPECT_NE(load_error(dir.path("absent.octet")).find("cannot open"), std::string::npos);
}

struct FloatGraphCase {
  const char* model;
  bool batch_norm;
  int channels, size;
};

class FloatGraphMatchesTorch : public ::testing::TestWithParam<FloatGraphCase> {};

TEST_P(FloatGraphMatchesTorch, SameLogits) {
  const FloatGraphCase& p = GetParam();
  GraphNet net = random_net(p.model, p.batch_norm, p.channels, p.size);
  const FloatModel folded = fold_for_inference(net->graph(), net->export_state());
  for (const Node& n : folded.graph.nodes) EXPECT_NE(n.op, Op::BatchNorm2d);
  FloatExecutor exec(folded);
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({5, p.channels, p.size, p.size});
  const torch::Tensor expected = net->forward(x);
  const FloatTensor logits = exec.run(x.data_ptr<float>(), 5);
  ASSERT_EQ(logits.numel(), expected.numel());
  double max_diff = 0, max_abs = 0;
  for (int64_t i = 0; i < logits.numel(); ++i) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(logits.data[i]) - expected.data_ptr<float>()[i]));
    max_abs = std::max(max_abs, std::abs(static_cast<double>(expected.data_ptr<float>()[i])));
  }
  std::printf("%s (bn %d): max |float graph - LibTorch| = %.3g (logits up to %.3g)\n", p.model, p.batch_norm,
              max_diff, max_abs);
  EXPECT_LT(max_diff, 1e-4 * std::max(1.0, max_abs));
}

// Grouped and depthwise convolutions (with batch norm folded into them): the
// float executor's float reference against LibTorch's conv2d with groups.
TEST(GroupedConvGraph, FloatExecutorMatchesTorch) {
  GraphBuilder b;
  int x = b.input(3, 16, 16);
  x = b.relu(b.conv_bn("stem", "stem_bn", x, 12, 3, 1, 1, true));
  x = b.relu(b.batch_norm("dw_bn", b.conv("dw", x, 12, 3, 2, 1, false, 12)));    // depthwise
  x = b.relu(b.batch_norm("gc_bn", b.conv("gc", x, 18, 1, 1, 0, false, 3)));     // 3 groups of 4 -> 6
  x = b.conv("dw5", x, 36, 5, 1, 2, true, 18);                                     // depthwise, multiplier 2
  b.linear("fc", b.flatten(b.global_avg_pool(x)), 10);
  torch::manual_seed(5);
  GraphNet net(b.finish());
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : net->named_state()) {  // non-trivial batch-norm statistics
    if (name.find("running_var") != std::string::npos) t.uniform_(0.5, 2.0);
    if (name.find("running_mean") != std::string::npos) t.uniform_(-0.2, 0.2);
  }
  net->eval();
  const FloatExecutor exec(fold_for_inference(net->graph(), net->export_state()));
  const torch::Tensor in = torch::randn({4, 3, 16, 16});
  const torch::Tensor expected = net->forward(in);
  const FloatTensor logits = exec.run(in.data_ptr<float>(), 4);
  ASSERT_EQ(logits.numel(), expected.numel());
  for (int64_t i = 0; i < logits.numel(); ++i)
    EXPECT_NEAR(logits.data[i], expected.data_ptr<float>()[i], 1e-4 * std::max(1.0f, std::abs(logits.data[i])))
        << "logit " << i;
}

INSTANTIATE_TEST_SUITE_P(Models, FloatGraphMatchesTorch,
                         ::testing::Values(FloatGraphCase{"lenet5", true, 1, 28}, FloatGraphCase{"lenet5", true, 3, 32},
                                           FloatGraphCase{"resnet20", true, 3, 32},
                                           FloatGraphCase{"resnet20", false, 3, 32},
                                           FloatGraphCase{"resnet18", true, 3, 32}),
                         [](const auto& info) {
                           const FloatGraphCase& c = info.param;
                           return std::string(c.model) + "_" + std::to_string(c.channels) + "x" +
                                  std::to_string(c.size) + (c.batch_norm ? "_bn" : "_nobn");
                         });

}  // namespace
}  // namespace octet
