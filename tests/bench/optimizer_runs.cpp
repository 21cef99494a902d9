#include "tests/bench/optimizer_runs.h"

#include <cmath>

namespace octet {

namespace {

constexpr int kEpochs = 2, kStepsPerEpoch = 50;

// Run `n`'s loss after `step` steps (counted from 1 over both epochs).
double loss_at(int n, const std::string& label, int step) {
  if (label == "adam lr 0.1") return step > 80 ? NAN : 2.3 * std::exp(0.045 * step);
  return 1.9 + 0.4 * std::exp(-0.02 * step * (1 + 0.1 * n));
}

}  // namespace

BenchTrainOptions optimizers_options() {
  BenchTrainOptions o;
  o.scenario = "optimizers";
  o.base = lab_training_defaults();
  return o;
}

std::vector<RunRecord> optimizer_runs(bool with_step_logs) {
  std::vector<RunRecord> records;
  int n = 0;
  for (const PlannedRun& run : plan_scenario(optimizers_options(), DeviceChoice())) {
    if (run.same_as >= 0) {  // as bench train does: the earlier run's record
      RunRecord copy = records[static_cast<size_t>(run.same_as)];
      copy.run = run;
      records.push_back(copy);
      continue;
    }
    RunRecord r{run, "", nlohmann::json::object(), {}};
    nlohmann::json epochs = nlohmann::json::array();
    for (int e = 1; e <= kEpochs; ++e) {
      double total = 0;
      for (int s = 1; s <= kStepsPerEpoch; ++s) {
        const int step = (e - 1) * kStepsPerEpoch + s;
        total += loss_at(n, run.label, step);
        if (with_step_logs)
          r.step_losses.push_back({e - 1 + static_cast<double>(s) / kStepsPerEpoch, loss_at(n, run.label, step)});
      }
      const double mean = total / kStepsPerEpoch;
      epochs.push_back({{"epoch", e},
                        {"steps", kStepsPerEpoch},
                        {"train_loss", std::isfinite(mean) ? nlohmann::json(mean) : nlohmann::json()},
                        {"train_top1", 30.0},
                        {"epoch_seconds", 10.0}});
    }
    r.training = {{"epochs", epochs}, {"final_test_top1", 40.0 + n}};
    records.push_back(r);
    ++n;
  }
  return records;
}

}  // namespace octet
