// The scaling scenario of `octet bench train` plans a multi-process run as
// skipped, with the reason, when this build or machine cannot make it, and
// runs it otherwise: no launch that is bound to fail.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/train_plan.h"

namespace octet {
namespace {

BenchTrainOptions scaling_on(const std::string& device, const std::string& processes) {
  BenchTrainOptions o;
  o.scenario = "scaling";
  o.base = lab_training_defaults();
  o.base.device = device;
  o.base.batch_size = 64;
  o.processes = processes;
  return o;
}

// Each planned run as "mode processes: skip reason" ("" when it runs).
std::vector<std::string> plan(const BenchTrainOptions& o, const DeviceChoice& d) {
  std::vector<std::string> runs;
  for (const PlannedRun& r : plan_scenario(o, d))
    runs.push_back(r.keys.at("scaling").get<std::string>() + " " + std::to_string(r.processes) + ": " + r.skipped);
  return runs;
}

DeviceChoice gpus(int count) {
  DeviceChoice d;
  d.cuda = count > 0;
  d.cuda_devices = count;
  return d;
}

TEST(BenchTrainScaling, OneGpuSkipsTheNcclRunsThatNeedAGpuPerRank) {
  const std::string skip = "needs 2 GPUs (NCCL: one per rank), 1 visible";
  EXPECT_EQ(plan(scaling_on("cuda", "1,2"), gpus(1)),
            (std::vector<std::string>{"weak 1: ", "weak 2: " + skip, "strong 1: ", "strong 2: " + skip}));
}

TEST(BenchTrainScaling, RanksUpToTheGpuCountRun) {
  EXPECT_EQ(
      plan(scaling_on("cuda", "1,2,4"), gpus(2)),
      (std::vector<std::string>{"weak 1: ", "weak 2: ", "weak 4: needs 4 GPUs (NCCL: one per rank), 2 visible",
                                "strong 1: ", "strong 2: ", "strong 4: needs 4 GPUs (NCCL: one per rank), 2 visible"}));
}

TEST(BenchTrainScaling, AMissingProcessGroupIsNamedBeforeTheGpuCount) {
  DeviceChoice d = gpus(1);
  d.cuda_process_group_missing = "no NCCL";
  EXPECT_EQ(plan(scaling_on("cuda", "1,2"), d)[1], "weak 2: needs data-parallel training: no NCCL");
}

TEST(BenchTrainScaling, CpuRanksDoNotNeedGpus) {
  EXPECT_EQ(plan(scaling_on("cpu", "1,2"), gpus(0)),
            (std::vector<std::string>{"weak 1: ", "weak 2: ", "strong 1: ", "strong 2: "}));
  DeviceChoice no_gloo = gpus(0);
  no_gloo.cpu_process_group_missing = "no Gloo";
  EXPECT_EQ(plan(scaling_on("cpu", "1,2"), no_gloo)[3], "strong 2: needs data-parallel training: no Gloo");
}

}  // namespace
}  // namespace octet
