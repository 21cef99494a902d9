// `auto-global` sets every point by one method, mse or percentile: the one
// whose whole int8 model scores the lower KL against float's logits on the
// scored calibration images. The oracle quantizes with each method by name and
// scores both models itself.
#include <gtest/gtest.h>

#include <numeric>

#include "quant/float_pass.h"
#include "quant/pipeline.h"
#include "quant/scored_images.h"
#include "runtime/cpu/cpu_engine.h"
#include "tests/quant/differing_points.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

TEST(AutoGlobal, ChoosesTheMethodWhoseModelScoresTheLowerKlOnZooLeNet) {
  const std::string dir = cifar10_dir();
  if (dir.empty()) GTEST_SKIP() << "CIFAR-10 is not written (OCTET_CIFAR10_DIR; tools/setup.sh writes it)";
  const Checkpoint checkpoint = load_checkpoint(zoo_checkpoint("lenet5_cifar10"));
  QuantizeOptions o;
  o.weight_rounding = "nearest";
  o.auto_samples = 1024;
  const auto quantized = [&](AmaxMethod method) {
    o.method = method;
    return quantize_checkpoint(checkpoint, dir, o, 1024);
  };
  const QuantizeResult global = quantized(AmaxMethod::AutoGlobal);
  const QuantizedModel mse = quantized(AmaxMethod::Mse).model, percentile = quantized(AmaxMethod::Percentile).model;

  const FloatExecutor executor(global.folded);
  FloatPassRecord record(executor, 0, global.calibration.samples);
  record.run(executor, global.calibration.images);
  const ScoredImages images(global.calibration, record.logits(), output_sizes(global.folded.graph));
  const auto summed_kl = [&](const QuantizedModel& m) {
    const std::vector<double> kl = score_whole_model(CpuEngine(m), images);
    return std::accumulate(kl.begin(), kl.end(), 0.0);
  };
  const double mse_kl = summed_kl(mse), percentile_kl = summed_kl(percentile);
  EXPECT_EQ(differing_points(global.model, percentile_kl < mse_kl ? percentile : mse), std::vector<std::string>{});
  EXPECT_EQ(global.model.method, "auto-global");
  // Here percentile wins clearly (0.66 against 0.81 when written): the choice is not mse's by default.
  EXPECT_LT(percentile_kl, 0.9 * mse_kl);
}

}  // namespace
}  // namespace octet
