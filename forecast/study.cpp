#include "forecast/study.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace octet {

namespace {

LossFit fit_curve(const Curve& curve, bool detect_change, const LossFitOptions& options, double* change) {
  *change = detect_change ? detect_schedule_change(curve.step, curve.loss) : 0;
  return fit_loss(curve.step, curve.loss, *change, options);
}

double mean_relative_error(const Curve& curve, const LossParams& b) {
  double sum = 0;
  for (size_t i = 0; i < curve.size(); ++i) sum += std::abs(b.at(curve.step[i]) - curve.loss[i]) / curve.loss[i];
  return sum / static_cast<double>(curve.size());
}

std::vector<DepthForecast> depth_forecasts(const std::vector<RunStudy>& runs, DepthKernel kernel, double lambda) {
  std::vector<const RunStudy*> usable;
  for (const RunStudy& r : runs)
    if (r.reaches && r.fit.origin == 0) usable.push_back(&r);
  std::vector<DepthForecast> result;
  if (usable.size() < 3) return result;  // the others must hold two depths
  std::vector<RunCoefficients> coefficients;
  for (const RunStudy* r : usable) coefficients.push_back({r->depth, r->fit.b});
  const std::vector<LossParams> predicted = leave_one_out(coefficients, kernel, lambda);
  for (size_t i = 0; i < usable.size(); ++i) {
    DepthForecast f;
    f.name = usable[i]->name;
    f.depth = usable[i]->depth;
    f.predicted = predicted[i];
    for (size_t j = 0; j < usable.size(); ++j)
      if (j != i) f.target_loss += usable[j]->target_loss / static_cast<double>(usable.size() - 1);
    f.steps = f.predicted.steps_to(f.target_loss);
    f.error = (f.steps - usable[i]->real_step) / usable[i]->real_step;
    f.curve_error = mean_relative_error(usable[i]->curve, f.predicted);
    result.push_back(f);
  }
  return result;
}

}  // namespace

double median_abs(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  for (double& v : values) v = std::abs(v);
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Study run_study(const std::vector<StudyRun>& runs, const StudyOptions& options) {
  check(!runs.empty(), "the study needs at least one run");
  check(options.target_acc > 0 && options.target_acc <= 100, "--target-acc must be a percentage in (0, 100]");
  Study study;
  study.target_acc = options.target_acc;
  for (const StudyRun& run : runs) {
    RunStudy r;
    r.name = run.name;
    r.depth = run.depth;
    const int window = options.window > 0 ? options.window : default_window(run.log.rows.size());
    r.curve = aggregate(run.log, window);
    double change = 0;
    r.fit = fit_curve(r.curve, options.detect_change, options.fit, &change);
    const Crossing crossing = first_reaching_accuracy(r.curve, options.target_acc);
    r.reaches = crossing.step >= 0 && crossing.step > r.fit.origin;
    r.steps_per_epoch = run.record ? run.record->steps_per_epoch()
                                   : static_cast<double>(std::count_if(run.log.rows.begin(), run.log.rows.end(),
                                                                       [&](const StepRecord& s) {
                                                                         return s.epoch == run.log.rows.front().epoch;
                                                                       }));
    if (r.reaches) {
      r.real_step = crossing.step;
      // The loss the run has when it reaches the accuracy (averaged like the
      // accuracy), not the whole-run fit's: that fit may miss the curve there.
      r.target_loss = crossing.loss;
      if (run.record) r.real_seconds = r.real_step * run.record->seconds_per_step(r.real_step);
      for (double fraction : options.cuts) {
        CutForecast c;
        c.fraction = fraction;
        const StepLog part = cut_step_log(run.log, fraction);
        const Curve curve = aggregate(part, window);
        c.last_step = static_cast<double>(part.rows.back().step);
        c.fit = fit_curve(curve, options.detect_change, options.fit, &c.change);
        c.steps = forecast_steps_to_loss(curve, c.fit, r.target_loss, options.replicates, options.seed, options.fit);
        c.error = (c.steps.point - r.real_step) / r.real_step;
        c.inside = c.steps.band.contains(r.real_step);
        if (run.record) c.seconds = c.steps.point * run.record->seconds_per_step(c.last_step);
        r.cuts.push_back(c);
      }
    }
    study.runs.push_back(r);
  }
  study.ridge = depth_forecasts(study.runs, DepthKernel::ridge, options.lambda);
  study.rbf = depth_forecasts(study.runs, DepthKernel::rbf, options.lambda);
  return study;
}

}  // namespace octet
