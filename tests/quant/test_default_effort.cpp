// The front doors' defaults by network size (NamedQuantizeOptions): auto amax
// and GPTQ rounding up to kFullDefaultsMacs of calibration pass, auto-global
// and nearest above, and whatever the user names kept as named; unsigned
// activations unless signed are named (or the lab's scheme).
#include <gtest/gtest.h>

#include "common/error.h"
#include "models/registry.h"
#include "quant/pipeline.h"

namespace octet {
namespace {

Checkpoint network(const std::string& model) {
  Checkpoint c;
  c.graph = build_model(model, model_options_for("cifar10", true));
  return c;
}

TEST(QuantizeDefaults, CalibrationMacsArePublishedMultiplyAddsTimesImages) {
  // CIFAR ResNet-18 0.56 G and ResNet-20 41 M multiply-adds per image.
  EXPECT_NEAR(calibration_macs(network("resnet18").graph, 1), 0.556e9, 0.005e9);
  EXPECT_NEAR(calibration_macs(network("resnet20").graph, 1), 41e6, 0.5e6);
  EXPECT_DOUBLE_EQ(calibration_macs(network("resnet20").graph, 1024),
                   1024 * calibration_macs(network("resnet20").graph, 1));
}

TEST(QuantizeDefaults, LargeNetworksGetAutoGlobalAndNearestUnlessNamed) {
  const Checkpoint resnet18 = network("resnet18"), resnet20 = network("resnet20");
  NamedQuantizeOptions named;  // 1,024 calibration images
  QuantizeOptions o = named.options(resnet18);
  EXPECT_TRUE(named.large_network_defaults(resnet18));
  EXPECT_EQ(o.method, AmaxMethod::AutoGlobal);
  EXPECT_EQ(o.weight_rounding, "nearest");

  o = named.options(resnet20);
  EXPECT_FALSE(named.large_network_defaults(resnet20));
  EXPECT_EQ(o.method, AmaxMethod::Auto);
  EXPECT_EQ(o.weight_rounding, "gptq");

  named.calibration_samples = 256;  // 142 G: the full defaults again
  EXPECT_FALSE(named.large_network_defaults(resnet18));
  EXPECT_EQ(named.options(resnet18).method, AmaxMethod::Auto);

  named.calibration_samples = 1024;
  named.method = "auto";  // named: kept; the rounding still follows the size
  o = named.options(resnet18);
  EXPECT_TRUE(named.large_network_defaults(resnet18));
  EXPECT_EQ(o.method, AmaxMethod::Auto);
  EXPECT_EQ(o.weight_rounding, "nearest");

  named.weight_rounding = "gptq";
  EXPECT_FALSE(named.large_network_defaults(resnet18));
  EXPECT_EQ(named.options(resnet18).weight_rounding, "gptq");

  named.method = "entropy";
  named.weight_rounding = "nearest";
  o = named.options(resnet20);
  EXPECT_EQ(o.method, AmaxMethod::Entropy);
  EXPECT_EQ(o.weight_rounding, "nearest");
}

TEST(QuantizeDefaults, ActivationsAreUnsignedUnlessSignedAreNamed) {
  const Checkpoint resnet20 = network("resnet20");
  NamedQuantizeOptions named;
  EXPECT_TRUE(named.options(resnet20).unsigned_activations);
  named.scheme = "lab";  // the course lab's int8: signed
  EXPECT_FALSE(named.options(resnet20).unsigned_activations);
  named.activations = "unsigned";
  EXPECT_TRUE(named.options(resnet20).unsigned_activations);
  named.scheme = "octet";
  named.activations = "signed";
  EXPECT_FALSE(named.options(resnet20).unsigned_activations);
  named.activations = "uint8";
  try {
    named.options(resnet20);
    ADD_FAILURE() << "--activations uint8 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--activations must be signed or unsigned (it is 'uint8')"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace octet
