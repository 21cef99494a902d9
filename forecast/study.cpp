#include "forecast/study.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace octet {

StudyRun read_study_run(const std::string& spec, const std::string& option) {
  const size_t eq = spec.find('=');
  check(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(),
        option + " '" + spec + "': expected NAME=STEP_LOG, e.g. resnet20=datasets/forecast-logs/resnet20.csv");
  StudyRun run;
  run.name = spec.substr(0, eq);
  size_t digits = run.name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(run.name[digits - 1]))) --digits;
  check(digits < run.name.size(), option + " '" + spec + "': the name must end in the model's depth, e.g. resnet20");
  run.depth = std::stod(run.name.substr(digits));
  const std::string path = spec.substr(eq + 1);
  run.log = read_curve_source(path);
  run.record = record_beside(path);
  return run;
}

int study_window(const StudyRun& run, const StudyOptions& options) {
  return options.window > 0 ? options.window : default_window(run.log.rows.size());
}

namespace {

// Fits after `start` (the warm-up's end), or after a schedule change found later.
LossFit fit_curve(const Curve& curve, double start, bool detect_change, const LossFitOptions& options,
                  double* change) {
  *change = std::max(start, detect_change ? detect_schedule_change(curve.step, curve.loss) : 0.0);
  return fit_loss(curve.step, curve.loss, *change, options);
}

DepthPrediction judged(double steps, double real_step, const Curve& curve, const std::vector<double>& forecast) {
  double sum = 0;
  for (size_t i = 0; i < curve.size(); ++i) sum += std::abs(forecast[i] - curve.loss[i]) / curve.loss[i];
  return {steps, (steps - real_step) / real_step, curve.size() > 0 ? sum / static_cast<double>(curve.size()) : 0};
}

// The first step, on a grid of `grain` steps after `from` up to `horizon`, where
// loss(step) <= target; infinity when none.
template <typename Loss>
double first_step_reaching(const Loss& loss, double target, double from, double grain, double horizon) {
  for (double step = from + grain; step <= horizon; step += grain)
    if (loss(step) <= target) return step;
  return std::numeric_limits<double>::infinity();
}

std::vector<DepthForecast> depth_forecasts(const std::vector<RunStudy>& runs, DepthKernel kernel, double lambda) {
  std::vector<const RunStudy*> usable;
  for (const RunStudy& r : runs)
    if (r.reaches) usable.push_back(&r);
  std::vector<DepthForecast> result;
  if (usable.size() < 3) return result;  // the others must hold two depths
  for (size_t held = 0; held < usable.size(); ++held) {
    const RunStudy& run = *usable[held];
    std::vector<const RunStudy*> others;
    std::vector<RunCoefficients> coefficients;
    DepthForecast f;
    f.name = run.name;
    f.depth = run.depth;
    double start = 0;  // the curves are compared after every run's fit has begun
    for (const RunStudy* r : usable)
      if (r != &run) {
        others.push_back(r);
        coefficients.push_back({r->depth, r->fit.b});
        f.target_loss += r->target_loss / static_cast<double>(usable.size() - 1);
        f.coefficients.origin += r->fit.origin / static_cast<double>(usable.size() - 1);
        start = std::max(start, r->fit.origin);
      }
    bool distinct = false;
    for (const RunCoefficients& c : coefficients) distinct |= c.depth != coefficients.front().depth;
    if (!distinct) continue;
    const DepthModel model = fit_depth_model(coefficients, kernel, lambda);
    const std::vector<double> w = model.weights(run.depth);
    f.coefficients.b = model.predict(run.depth);
    const auto mixture = [&](double step) {
      double log_loss = 0;
      for (size_t j = 0; j < others.size(); ++j) log_loss += w[j] * std::log(others[j]->fit.at(step));
      return std::exp(log_loss);
    };
    Curve judged_part;  // the held-out run's windows after every fit's start
    std::vector<double> from_b;
    for (size_t i = 0; i < run.curve.size(); ++i)
      if (run.curve.step[i] > start) {
        judged_part.step.push_back(run.curve.step[i]);
        judged_part.loss.push_back(run.curve.loss[i]);
        from_b.push_back(f.coefficients.at(run.curve.step[i]));
        f.curve.push_back(mixture(run.curve.step[i]));
      }
    f.curve_step = judged_part.step;
    f.from_coefficients = judged(f.coefficients.step_reaching(f.target_loss), run.real_step, judged_part, from_b);
    const double grain = std::max(1.0, (run.curve.step.back() - run.curve.step.front()) / 1000);
    const double horizon = start + 100 * run.curve.step.back();
    f.from_curves = judged(first_step_reaching(mixture, f.target_loss, start, grain, horizon), run.real_step,
                           judged_part, f.curve);
    result.push_back(f);
  }
  return result;
}

// The complete fits of the runs in `members`, weighted for `depth`.
std::vector<FamilyMember> family_of(const std::vector<RunStudy>& runs, const std::vector<size_t>& members,
                                    double depth, const StudyOptions& options) {
  std::vector<const LossFit*> fits;
  std::vector<double> depths;
  for (size_t j : members) fits.push_back(&runs[j].fit), depths.push_back(runs[j].depth);
  return weighted_family(fits, depths, depth, options.depth_regression, options.lambda);
}

// Run `held`'s cut `cut` forecast from `family`.
FamilyForecast family_cut_forecast(const std::vector<StudyRun>& inputs, const std::vector<RunStudy>& runs,
                                   size_t held, size_t cut, const std::vector<FamilyMember>& family,
                                   const StudyOptions& options) {
  const CutForecast& c = runs[held].cuts[cut];
  const Curve part = aggregate(cut_step_log(inputs[held].log, c.fraction), study_window(inputs[held], options));
  return forecast_from_family(part, c.fit.origin, family, runs[held].target_loss, options.fit.weighting,
                              100 * c.last_step);
}

// Each cut of each run that reaches the target, forecast from all the other
// runs; its band from the same method's errors on those others, each forecast
// at the same cut from the rest (4 runs or more).
void add_family_forecasts(const std::vector<StudyRun>& inputs, const StudyOptions& options,
                          std::vector<RunStudy>& runs) {
  if (runs.size() < 3) return;
  std::vector<size_t> reaching;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].reaches) reaching.push_back(i);
  const auto all_but = [&](std::vector<size_t> excluded) {
    std::vector<size_t> members;
    for (size_t j = 0; j < runs.size(); ++j)
      if (std::find(excluded.begin(), excluded.end(), j) == excluded.end()) members.push_back(j);
    return members;
  };
  if (reaching.size() >= 3)
    for (size_t held : reaching) {
      RunStudy& run = runs[held];
      for (size_t other : reaching)
        if (other != held) run.others_mean_step += runs[other].real_step / static_cast<double>(reaching.size() - 1);
      run.others_mean_error = (run.others_mean_step - run.real_step) / run.real_step;
    }
  for (size_t held : reaching) {
    RunStudy& run = runs[held];
    const std::vector<FamilyMember> family = family_of(runs, all_but({held}), run.depth, options);
    // For the hindcasts (4 runs or more): each other run's family and mean step without it and `held`.
    std::vector<size_t> others;
    std::vector<std::vector<FamilyMember>> rest_family;
    std::vector<double> rest_mean;
    for (size_t other : reaching)
      if (other != held && runs.size() >= 4) {
        others.push_back(other);
        rest_family.push_back(family_of(runs, all_but({held, other}), runs[other].depth, options));
        double mean = 0;
        for (size_t j : reaching)
          if (j != held && j != other) mean += runs[j].real_step / static_cast<double>(reaching.size() - 2);
        rest_mean.push_back(mean);
      }
    for (size_t cut = 0; cut < run.cuts.size(); ++cut) {
      CutForecast& c = run.cuts[cut];
      c.family = family_cut_forecast(inputs, runs, held, cut, family, options);
      c.has_family = true;
      for (double step : run.curve.step)
        if (step > c.fit.origin) c.family_curve_step.push_back(step), c.family_curve.push_back(c.family.at(family, step));
      c.family_error = (c.family.steps - run.real_step) / run.real_step;
      std::vector<Hindcast> hindcasts;
      for (size_t i = 0; i < others.size(); ++i)
        hindcasts.push_back({family_cut_forecast(inputs, runs, others[i], cut, rest_family[i], options).steps,
                             rest_mean[i], runs[others[i]].real_step});
      const JudgedForecast judged = judge_by_hindcasts(c.family.steps, run.others_mean_step, hindcasts);
      c.family_band = judged.band;
      c.family_inside = c.family_band.contains(run.real_step);
      if (judged.has_blend) {
        c.has_blend = true;
        c.blend_weight = judged.blend_weight;
        c.blend_steps = judged.blend_steps;
        c.blend_error = (c.blend_steps - run.real_step) / run.real_step;
        c.blend_band = judged.blend_band;
        c.blend_inside = c.blend_band.contains(run.real_step);
      }
    }
  }
}

}  // namespace

double median_abs(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  for (double& v : values) v = std::abs(v);
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double reachable_target(const std::vector<StudyRun>& runs, const StudyOptions& options) {
  double lowest_best = 100;
  for (const StudyRun& run : runs) {
    std::vector<double> negated;
    for (double a : aggregate(run.log, study_window(run, options)).acc) negated.push_back(-a);
    lowest_best = std::min(lowest_best, -monotone_decreasing(negated).back());  // the monotone fit's last, highest
  }
  return std::floor(lowest_best);
}

Study run_study(const std::vector<StudyRun>& runs, const StudyOptions& options) {
  check(!runs.empty(), "the study needs at least one run");
  check(options.target_acc >= 0 && options.target_acc <= 100, "--target-acc must be a percentage in (0, 100]");
  Study study;
  study.target_acc = options.target_acc > 0 ? options.target_acc : reachable_target(runs, options);
  check(study.target_acc > 0, "no run's training accuracy reaches 1%: no target accuracy to forecast");
  for (const StudyRun& run : runs) {
    RunStudy r;
    r.name = run.name;
    r.depth = run.depth;
    const int window = study_window(run, options);
    r.curve = aggregate(run.log, window);
    const double warmup = options.after_warmup && run.record ? run.record->warmup_steps() : 0;
    double change = 0;
    r.fit = fit_curve(r.curve, warmup, options.detect_change, options.fit, &change);
    const Crossing crossing = first_reaching_accuracy(r.curve, study.target_acc);
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
        c.fit = fit_curve(curve, warmup, options.detect_change, options.fit, &c.change);
        c.steps = forecast_steps_to_loss(curve, c.fit, r.target_loss, options.replicates, options.seed, options.fit);
        c.error = (c.steps.point - r.real_step) / r.real_step;
        c.inside = c.steps.band.contains(r.real_step);
        if (run.record) c.seconds = c.steps.point * run.record->seconds_per_step(c.last_step);
        r.cuts.push_back(c);
      }
    }
    study.runs.push_back(r);
  }
  add_family_forecasts(runs, options, study.runs);
  if (options.depth_regression) {
    study.ridge = depth_forecasts(study.runs, DepthKernel::ridge, options.lambda);
    study.rbf = depth_forecasts(study.runs, DepthKernel::rbf, options.lambda);
  }
  return study;
}

}  // namespace octet
