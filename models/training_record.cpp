#include "models/training_record.h"

#include <nlohmann/json.hpp>

namespace octet {

namespace {

using nlohmann::json;

json options_json(const RecordedOptions& o) {
  return {{"model", o.model},
          {"dataset", o.dataset},
          {"epochs", o.epochs},
          {"batch_size", o.batch_size},
          {"optimizer", o.optimizer},
          {"lr", o.lr},
          {"momentum", o.momentum},
          {"weight_decay", o.weight_decay},
          {"schedule", o.schedule},
          {"warmup_epochs", o.warmup_epochs},
          {"batch_norm", o.batch_norm},
          {"augment", o.augment},
          {"device", o.device},
          {"precision", o.precision},
          {"channels_last", o.channels_last},
          {"cuda_graph", o.cuda_graph},
          {"allreduce", o.allreduce},
          {"bucket_mb", o.bucket_mb},
          {"workers", o.workers},
          {"threads", o.threads},
          {"seed", o.seed},
          {"test_samples", o.test_samples},
          {"init", o.init}};
}

json epoch_json(const EpochStats& e) {
  return {{"epoch", e.epoch},
          {"steps", e.steps},
          {"lr", e.lr},
          {"train_loss", e.train_loss},
          {"train_top1", e.train_top1},
          {"data_seconds", e.data_seconds},
          {"compute_seconds", e.compute_seconds},
          {"epoch_seconds", e.epoch_seconds},
          {"test_loss", e.test_loss},
          {"test_top1", e.test_top1},
          {"eval_seconds", e.eval_seconds},
          {"communication_seconds", e.communication_seconds},
          {"allreduce_bytes", e.allreduce_bytes},
          {"skipped_steps", e.skipped_steps}};
}

// The options older records lack default to the trainer's defaults
// (train/options.h), which those runs had.
RecordedOptions options_from(const json& j) {
  RecordedOptions o;
  o.model = j.at("model");
  o.dataset = j.at("dataset");
  o.epochs = j.at("epochs");
  o.batch_size = j.at("batch_size");
  o.optimizer = j.at("optimizer");
  o.lr = j.at("lr");
  o.momentum = j.value("momentum", 0.9);
  o.weight_decay = j.value("weight_decay", 5e-4);
  o.schedule = j.at("schedule");
  o.warmup_epochs = j.value("warmup_epochs", 0.0);
  o.batch_norm = j.value("batch_norm", true);
  o.augment = j.value("augment", o.dataset == "cifar10");
  o.device = j.at("device");
  o.precision = j.value("precision", std::string("fp32"));
  o.channels_last = j.value("channels_last", false);
  o.cuda_graph = j.value("cuda_graph", false);
  o.allreduce = j.value("allreduce", std::string("overlap"));
  o.bucket_mb = j.value("bucket_mb", 25.0);
  o.workers = j.value("workers", 0);
  o.threads = j.value("threads", 0);
  o.seed = j.at("seed");
  o.test_samples = j.value("test_samples", int64_t{0});
  o.init = j.value("init", std::string());
  return o;
}

EpochStats epoch_from(const json& j) {
  EpochStats e;
  e.epoch = j.at("epoch");
  e.steps = j.at("steps");
  e.lr = j.at("lr");
  e.train_loss = j.at("train_loss");
  e.train_top1 = j.at("train_top1");
  e.data_seconds = j.at("data_seconds");
  e.compute_seconds = j.at("compute_seconds");
  e.epoch_seconds = j.at("epoch_seconds");
  e.test_loss = j.at("test_loss");
  e.test_top1 = j.at("test_top1");
  e.eval_seconds = j.at("eval_seconds");
  e.communication_seconds = j.value("communication_seconds", 0.0);
  e.allreduce_bytes = j.value("allreduce_bytes", int64_t{0});
  e.skipped_steps = j.value("skipped_steps", int64_t{0});
  return e;
}

}  // namespace

std::string training_record_json(const TrainingRecord& record) {
  const TrainReport& r = record.results;
  json epochs = json::array();
  for (const EpochStats& e : r.epochs) epochs.push_back(epoch_json(e));
  const json j = {
      {"options", options_json(record.options)},
      {"parameters", r.parameters},
      {"world_size", r.world_size},
      {"epochs", epochs},
      {"total_data_seconds", r.total_data_seconds},
      {"total_compute_seconds", r.total_compute_seconds},
      {"total_communication_seconds", r.total_communication_seconds},
      {"total_seconds", r.total_seconds},
      {"final_test_top1", r.final_test_top1},
  };
  return j.dump(2);
}

TrainingRecord parse_training_record(const std::string& text) {
  const json j = json::parse(text);
  TrainingRecord record;
  record.options = options_from(j.at("options"));
  TrainReport& r = record.results;
  for (const json& e : j.at("epochs")) r.epochs.push_back(epoch_from(e));
  r.total_data_seconds = j.at("total_data_seconds");
  r.total_compute_seconds = j.at("total_compute_seconds");
  r.total_communication_seconds = j.value("total_communication_seconds", 0.0);
  r.total_seconds = j.at("total_seconds");
  r.final_test_top1 = j.at("final_test_top1");
  r.parameters = j.value("parameters", int64_t{0});
  r.world_size = j.value("world_size", 1);
  return record;
}

}  // namespace octet
