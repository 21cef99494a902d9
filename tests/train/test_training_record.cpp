// The training record's one reader and writer (models/training_record.h):
// records octet train wrote come back byte for byte, older records without the
// later fields read with the trainer's defaults, and a missing field is named.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "models/training_record.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

std::string committed_record(const std::string& name) {
  return read_text(std::string(OCTET_SOURCE_DIR) + "/datasets/forecast-logs/" + name);
}

TEST(TrainingRecord, RecordsOctetTrainWroteComeBackByteForByte) {
  // resnet20.json: the current writer's fields; lenet5_lr0.01_seed1.json: a
  // record from before the data-parallel options, read with their defaults.
  const std::string text = committed_record("resnet20.json");
  ASSERT_FALSE(text.empty()) << "datasets/forecast-logs/resnet20.json is missing";
  const TrainingRecord record = parse_training_record(text);
  EXPECT_EQ(training_record_json(record) + "\n", text);
  EXPECT_EQ(record.options.model, "resnet20");
  EXPECT_EQ(record.options.dataset, "cifar10");
  EXPECT_DOUBLE_EQ(record.options.warmup_epochs, 0.1);
  EXPECT_EQ(record.results.epochs.size(), 10u);
  EXPECT_EQ(record.results.epochs.front().epoch, 1);
  EXPECT_EQ(record.results.epochs.front().steps, 960);

  const nlohmann::json old = nlohmann::json::parse(committed_record("lenet5_lr0.01_seed1.json"));
  ASSERT_FALSE(old.at("options").contains("allreduce"));
  ASSERT_FALSE(old.contains("total_communication_seconds"));
  const TrainingRecord older = parse_training_record(old.dump());
  EXPECT_EQ(older.options.allreduce, "overlap");
  EXPECT_DOUBLE_EQ(older.options.bucket_mb, 25);
  EXPECT_EQ(older.options.test_samples, 0);
  EXPECT_EQ(older.results.total_communication_seconds, 0);
  EXPECT_EQ(older.results.epochs.front().skipped_steps, 0);
  EXPECT_DOUBLE_EQ(older.results.final_test_top1, old.at("final_test_top1").get<double>());
}

TEST(TrainingRecord, EveryFieldRoundTrips) {
  TrainingRecord r;
  RecordedOptions& o = r.options;
  o.model = "resnet32", o.dataset = "cifar10", o.epochs = 7, o.batch_size = 96, o.optimizer = "adam", o.lr = 0.003;
  o.momentum = 0.8, o.weight_decay = 1e-4, o.schedule = "multistep", o.warmup_epochs = 0.25, o.batch_norm = false;
  o.augment = true, o.device = "cuda", o.precision = "amp-bf16", o.channels_last = true, o.cuda_graph = true;
  o.allreduce = "after-backward", o.bucket_mb = 12.5, o.workers = 3, o.threads = 5, o.seed = 18446744073709551615ull;
  o.test_samples = 1000, o.init = "warm.octet";
  EpochStats e;
  e.epoch = 2, e.steps = 521, e.lr = 0.0025, e.train_loss = 1.25, e.train_top1 = 55.5, e.data_seconds = 1.5;
  e.compute_seconds = 20.25, e.epoch_seconds = 22, e.test_loss = 1.375, e.test_top1 = 52.25, e.eval_seconds = 0.75;
  e.communication_seconds = 3.5, e.allreduce_bytes = 123456789012, e.skipped_steps = 4;
  r.results.epochs = {e};
  r.results.total_data_seconds = 1.5, r.results.total_compute_seconds = 20.25, r.results.total_seconds = 23;
  r.results.total_communication_seconds = 3.5, r.results.final_test_top1 = 52.25, r.results.parameters = 464154;
  r.results.world_size = 4;
  const std::string text = training_record_json(r);
  const TrainingRecord back = parse_training_record(text);
  EXPECT_EQ(training_record_json(back), text);
  EXPECT_EQ(back.options.seed, o.seed);
  EXPECT_EQ(back.options.init, "warm.octet");
  EXPECT_FALSE(back.options.batch_norm);
  EXPECT_EQ(back.results.epochs.at(0).allreduce_bytes, 123456789012);
  EXPECT_EQ(back.results.world_size, 4);
  EXPECT_EQ(back.results.parameters, 464154);
}

TEST(TrainingRecord, AMissingFieldIsNamed) {
  nlohmann::json j = nlohmann::json::parse(committed_record("resnet20.json"));
  j.at("epochs").at(0).erase("epoch_seconds");
  try {
    parse_training_record(j.dump());
    FAIL() << "a record without an epoch's epoch_seconds was read";
  } catch (const nlohmann::json::exception& e) {
    EXPECT_NE(std::string(e.what()).find("epoch_seconds"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_training_record("{\"epochs\": []}"), nlohmann::json::exception);
  EXPECT_THROW(parse_training_record("not json"), nlohmann::json::exception);
}

}  // namespace
}  // namespace octet
