// Data-parallel training through the octet binary: `octet launch` starts the
// ranks, c10d's Gloo all-reduces their gradients. LeNet-5 runs without batch
// norm, whose per-rank batch statistics would make two half batches differ
// from one whole batch. A build without Gloo (against pip's LibTorch, which
// has no Gloo headers) refuses such training, and these tests check that.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/support/test_util.h"
#include "train/process_group.h"

namespace octet {
namespace {

// Runs a shell command line, its output going to `output`; returns the exit status.
int run(const std::string& command, const std::string& output) {
  const int status = std::system(("OMP_WAIT_POLICY=passive " + command + " >" + output + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// 3 epochs of 100 steps (6400 images, global batch 64), reshuffled every epoch.
std::string lenet_training(int batch_size, const std::string& name, const TempDir& dir) {
  return std::string(OCTET_BINARY) + " train --model lenet5 --dataset fashion-mnist --data " + fashion_mnist_dir() +
         " --no-bn --train-samples 6400 --epochs 3 --schedule constant --lr 0.01 --threads 1 --batch-size " +
         std::to_string(batch_size) + " --step-log " + dir.path(name + ".csv") + " --json " +
         dir.path(name + ".json");
}

// Two ranks with half the batch each see, step by step, exactly the samples of
// one process with the whole batch, and average the same gradient. Only float
// rounding differs (a half-batch sum plus the all-reduce instead of one sum):
// the logged losses agree to 1e-4 through the first half epoch (50 steps),
// then SGD amplifies the rounding as it amplifies that of a different thread
// count in one process. How fast depends on the CPU's and the BLAS's kernels:
// with Debian's reference BLAS, on an AVX-512 EPYC the losses agreed to 1e-4
// for 150 steps and to ~2e-2 at step 300; on an AVX2-only EPYC (2026-11-26)
// steps 1-98 were bit-identical, step 109 2e-4 apart and step 300 5.1%. With
// OpenBLAS (tools/setup.sh installs it), on that EPYC (2026-11-27): steps 1-20
// bit-identical, at most 8.5e-6 apart through step 50, 3.5e-5 through 70,
// 1.0% through 100, 5.2% at step 300.
TEST(DataParallel, TwoRanksWithHalfTheBatchFollowOneProcessWithTheWhole) {
  const std::string no_gloo = process_group_missing("cpu");
  if (!no_gloo.empty()) GTEST_SKIP() << no_gloo;
  TempDir dir;
  ASSERT_EQ(run(lenet_training(64, "one", dir), dir.path("one.log")), 0) << read_text(dir.path("one.log"));
  const std::string launch = std::string(OCTET_BINARY) + " launch -n 2 -- ";
  ASSERT_EQ(run(launch + lenet_training(32, "two", dir), dir.path("two.log")), 0) << read_text(dir.path("two.log"));
  ASSERT_EQ(run(launch + lenet_training(32, "after", dir) + " --allreduce after-backward", dir.path("after.log")), 0)
      << read_text(dir.path("after.log"));

  const std::vector<double> one = step_log_losses(dir.path("one.csv")), two = step_log_losses(dir.path("two.csv"));
  ASSERT_EQ(one.size(), 300u);
  ASSERT_EQ(two.size(), 300u);
  for (size_t i = 0; i < one.size(); ++i) {
    if (i < 50)
      ASSERT_NEAR(two[i], one[i], 1e-4 * one[i]) << "step " << i + 1;
    else
      ASSERT_NEAR(two[i], one[i], 0.1 * one[i]) << "step " << i + 1;
  }
  // Overlapped and after-backward all-reduces sum the same buckets: bit-identical runs.
  EXPECT_EQ(read_text(dir.path("after.csv")), read_text(dir.path("two.csv")));

  const auto single = nlohmann::json::parse(read_text(dir.path("one.json")));
  const auto pair = nlohmann::json::parse(read_text(dir.path("two.json")));
  EXPECT_EQ(single.at("world_size"), 1);
  EXPECT_EQ(pair.at("world_size"), 2);
  EXPECT_NEAR(pair.at("final_test_top1").get<double>(), single.at("final_test_top1").get<double>(), 1.5);
  const int64_t gradient_bytes = pair.at("parameters").get<int64_t>() * 4;
  for (const auto& epoch : pair.at("epochs")) {
    EXPECT_EQ(epoch.at("steps"), 100);
    EXPECT_EQ(epoch.at("allreduce_bytes").get<int64_t>(), 100 * gradient_bytes);
  }
  EXPECT_EQ(single.at("epochs").at(0).at("allreduce_bytes"), 0);
  EXPECT_EQ(single.at("total_communication_seconds"), 0.0);
  EXPECT_TRUE(pair.contains("total_communication_seconds"));
  // Only rank 0 prints the epoch lines.
  const std::string log = read_text(dir.path("two.log"));
  EXPECT_EQ(log.find("epoch   1/3"), log.rfind("epoch   1/3")) << log;
}

// A rank killed in the middle of training: the surviving rank notices the
// broken connection itself and exits with an error naming it (it ignores the
// launcher's SIGTERM here to show that), and `octet launch` exits non-zero
// naming the killed rank. Rank 1 is killed once rank 0's step log has a row
// of the first epoch (written when the epoch ends): the process group is up
// and its all-reduces have run, however slow the machine. `timeout` only
// guards against a hang.
TEST(DataParallel, AKilledRankStopsTheOthersWithAnError) {
  const std::string no_gloo = process_group_missing("cpu");
  if (!no_gloo.empty()) GTEST_SKIP() << no_gloo;
  TempDir dir;
  const std::string steps = dir.path("steps.csv");
  const std::string rank_script =
      "'trap \"\" TERM; if [ \"$RANK\" = 1 ]; then (until grep -qs \"^1,\" " + steps +
      "; do sleep 0.1; done; kill -9 $$) & fi; exec \"$0\" train --model lenet5 --dataset fashion-mnist --data " +
      fashion_mnist_dir() + " --train-samples 640 --epochs 1000 --batch-size 16 --threads 1 --step-log " + steps + "'";
  const int status = run("timeout 300 " + std::string(OCTET_BINARY) + " launch -n 2 -- sh -c " + rank_script + " " +
                             OCTET_BINARY,
                         dir.path("log"));
  const std::string log = read_text(dir.path("log"));
  EXPECT_EQ(status, 1) << log;
  EXPECT_NE(log.find("rank 1 of 2 was killed by signal 9"), std::string::npos) << log;
  EXPECT_NE(log.find("octet: error: data-parallel rank 0 of 2: "), std::string::npos) << log;
  EXPECT_NE(read_text(steps).find("\n1,"), std::string::npos) << "rank 1 was killed before training";
}

// Without Gloo, every rank stops before training with an error saying why.
TEST(DataParallel, WithoutGlooTheRanksRefuseSayingWhy) {
  const std::string no_gloo = process_group_missing("cpu");
  if (no_gloo.empty()) GTEST_SKIP() << "this build has Gloo: the tests above train on it";
  TempDir dir;
  const int status =
      run(std::string(OCTET_BINARY) + " launch -n 2 -- " + lenet_training(32, "two", dir), dir.path("two.log"));
  const std::string log = read_text(dir.path("two.log"));
  EXPECT_EQ(status, 1) << log;
  EXPECT_NE(log.find("octet: error: rank 0 of 2: " + no_gloo), std::string::npos) << log;
  EXPECT_FALSE(file_exists(dir.path("two.json"))) << "nothing is written";
}

}  // namespace
}  // namespace octet
