// A quantized model records the float checkpoint it came from (parameters and
// graph hashed), and a checkpoint given with a quantized model that was not
// made from it is refused naming both.
#include <gtest/gtest.h>

#include <cmath>

#include "common/safetensors.h"
#include "qmodel/checkpoint_identity.h"
#include "tests/support/random_model.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

QuantizedModel quantized_lenet(const Checkpoint& c) {
  return quantize_random(c, quick_quantize_options(), 16);
}

TEST(ModelIdentity, TheQuantizerRecordsItsCheckpointAndTheFileKeepsIt) {
  const Checkpoint c = random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 3);
  const QuantizedModel q = quantized_lenet(c);
  EXPECT_EQ(q.source, checkpoint_identity(c));
  EXPECT_EQ(q.source.model, "lenet5");
  TempDir dir;
  save_quantized_model(q, dir.path("q.octet"));
  EXPECT_EQ(load_quantized_model(dir.path("q.octet")).source, q.source);
  EXPECT_EQ(error_of([&] { check_quantized_from(q, "'q'", c, "'c'"); }), "no error");
}

TEST(ModelIdentity, DependsOnTheWeightsAndTheGraphOnly) {
  Checkpoint c = random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 3);
  const CheckpointIdentity id = checkpoint_identity(c);
  // Saved and loaded again with another training record: the same identity.
  c.training_json = R"({"epochs": 1})";
  TempDir dir;
  save_checkpoint(c, dir.path("c.octet"));
  EXPECT_EQ(checkpoint_identity(load_checkpoint(dir.path("c.octet"))), id);
  // One weight changed by one float step: another identity.
  Checkpoint nudged = c;
  float& w = nudged.params.at("conv1.weight").data[7];
  w = std::nextafter(w, 1.0f);
  EXPECT_NE(checkpoint_identity(nudged).params_sha256, id.params_sha256);
  EXPECT_EQ(checkpoint_identity(nudged).graph_sha256, id.graph_sha256);
  // Another graph (colour input) with the same name.
  const Checkpoint colour = random_checkpoint("lenet5", ModelOptions{3, 32, 32, 10, true}, 3);
  EXPECT_NE(checkpoint_identity(colour).graph_sha256, id.graph_sha256);
}

TEST(ModelIdentity, AMismatchedPairIsRefusedNamingBoth) {
  const Checkpoint lenet = random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 3);
  const QuantizedModel q = quantized_lenet(lenet);
  // Same architecture, other weights.
  const Checkpoint retrained = random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 4);
  std::string msg = error_of([&] { check_quantized_from(q, "'lenet.int8.octet'", retrained, "'other.octet'"); });
  EXPECT_NE(msg.find("'lenet.int8.octet' was quantized from the checkpoint lenet5 (parameters sha256 " +
                     q.source.params_sha256.substr(0, 12)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("not from 'other.octet', which is lenet5 (parameters sha256 " +
                     checkpoint_identity(retrained).params_sha256.substr(0, 12)),
            std::string::npos)
      << msg;
  // Another network.
  const Checkpoint resnet = random_checkpoint("resnet20", ModelOptions{1, 28, 28, 10, true}, 3);
  msg = error_of([&] { check_quantized_from(q, "'lenet.int8.octet'", resnet, "'resnet.octet'"); });
  EXPECT_NE(msg.find("which is resnet20"), std::string::npos) << msg;
}

TEST(ModelIdentity, VersionOneFilesAndMissingIdentitiesAreRefusedClearly) {
  const QuantizedModel q = quantized_lenet(random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 3));
  TempDir dir;
  save_quantized_model(q, dir.path("q.octet"));
  TensorFile file = TensorFile::load(dir.path("q.octet"));
  file.metadata["format_version"] = "1";
  file.metadata.erase("source_checkpoint");
  file.save(dir.path("v1.octet"));
  std::string msg = error_of([&] { load_quantized_model(dir.path("v1.octet")); });
  EXPECT_NE(msg.find("v1.octet: quantized model format version 1 predates the record of the float checkpoint"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("quantize the checkpoint again"), std::string::npos) << msg;

  file.metadata["format_version"] = std::to_string(kQuantizedVersion);
  file.metadata["source_checkpoint"] = R"({"model": "lenet5", "params_sha256": "abc", "graph_sha256": "def"})";
  file.save(dir.path("bad_id.octet"));
  msg = error_of([&] { load_quantized_model(dir.path("bad_id.octet")); });
  EXPECT_NE(msg.find("identity of the source checkpoint is missing or malformed"), std::string::npos) << msg;
}

}  // namespace
}  // namespace octet
