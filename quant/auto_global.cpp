#include "quant/auto_global.h"

#include <cstdio>
#include <numeric>
#include <string>

#include "common/error.h"
#include "quant/scored_images.h"
#include "runtime/cpu/cpu_engine.h"

namespace octet {

void choose_global_amax(const AutoSearchPoints& points, const Int8ModelBuilder& build, const Calibration& cal,
                        const FloatTensor& target, double percentile, std::vector<double>* amax,
                        std::vector<std::string>* methods) {
  const ScoredImages images(cal, target, output_sizes(*points.graph));
  // Every point is set by each trial, so the winning trial is the answer: *amax and *methods take it.
  double best_kl = 0;
  std::string scores;
  AmaxMethod winner = AmaxMethod::Mse;
  for (AmaxMethod method : {AmaxMethod::Mse, AmaxMethod::Percentile}) {
    std::vector<double> trial = *amax;
    std::vector<std::string> trial_methods = *methods;
    for (size_t k = 0; k < points.float_nodes.size(); ++k) {
      const int p = points.float_nodes[k];
      trial[p] = compute_amax(cal.stats[p], method, percentile, points.levels[k]);
      trial_methods[p] = amax_method_name(method);
    }
    double kl = 0;
    try {
      const std::vector<double> per_image = score_whole_model(CpuEngine(build(trial, trial_methods)), images);
      kl = std::accumulate(per_image.begin(), per_image.end(), 0.0);
    } catch (const Error&) {
      if (method == AmaxMethod::Mse) throw;
      continue;
    }
    char score[64];
    std::snprintf(score, sizeof score, "%s%s %.4g", scores.empty() ? "" : ", ", amax_method_name(method), kl);
    scores += score;
    if (method == AmaxMethod::Mse || kl < best_kl) {
      best_kl = kl;
      winner = method;
      *amax = std::move(trial);
      *methods = std::move(trial_methods);
    }
  }
  // The scores behind the choice (quantize's table of nodes shows only the choice).
  std::fprintf(stderr, "auto-global: %s on %lld calibration images: %s; every tensor takes %s\n", images.criterion(),
               static_cast<long long>(images.count()), scores.c_str(), amax_method_name(winner));
}

}  // namespace octet
