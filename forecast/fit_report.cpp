#include "forecast/fit_report.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/error.h"
#include "common/file_io.h"
#include "forecast/family_forecast.h"
#include "forecast/forecast.h"
#include "forecast/report_json.h"
#include "forecast/train_record.h"

namespace octet {

namespace {

// A complete run of the family that `fit --with-run` forecasts with.
struct Member {
  StudyRun run;
  Curve curve;
  LossFit fit;
  Crossing crossing;  // of the target accuracy, when one is given
};

Member fit_member(const std::string& spec, const StudyOptions& o, double target_acc) {
  Member m{read_study_run(spec, "--with-run"), {}, {}, {}};
  m.curve = aggregate(m.run.log, study_window(m.run, o));
  m.fit = fit_loss(m.curve.step, m.curve.loss, o.after_warmup && m.run.record ? m.run.record->warmup_steps() : 0,
                   o.fit);
  if (target_acc > 0) {
    m.crossing = first_reaching_accuracy(m.curve, target_acc);
    check(m.crossing.step >= 0, "--with-run " + spec + ": the run never reaches " + std::to_string(target_acc) +
                                    "% training accuracy");
  }
  return m;
}

// The members but one (`skip`; none when out of range), weighted for `depth`
// (alike without one).
std::vector<FamilyMember> family_from(const std::vector<Member>& members, size_t skip, double depth) {
  std::vector<double> depths;
  std::vector<const LossFit*> fits;
  for (size_t i = 0; i < members.size(); ++i)
    if (i != skip) depths.push_back(members[i].run.depth), fits.push_back(&members[i].fit);
  return weighted_family(fits, depths, depth, depth >= 0);
}

// The log's part that is fitted, and its fit.
struct FittedPart {
  StepLog full;
  std::optional<TrainRecord> record;
  std::vector<Member> members;
  int window = 0;
  Curve full_curve, curve;
  double last_step = 0, origin = 0, steps_per_epoch = 0;
  LossFit fit;
};

FittedPart fit_part(const FitRequest& c) {
  FittedPart p;
  p.full = read_curve_source(c.log);
  p.record = c.record.empty() ? record_beside(c.log) : read_train_record(c.record);
  check(c.target_acc <= 0 || c.target_loss <= 0, "give --target-acc or --target-loss, not both");
  check(c.with_runs.empty() || c.with_runs.size() >= 2, "--with-run: give at least 2 complete runs of the family");
  for (const std::string& spec : c.with_runs) p.members.push_back(fit_member(spec, c.options, c.target_acc));
  p.window = c.options.window > 0 ? c.options.window : default_window(p.full.rows.size());
  p.full_curve = aggregate(p.full, p.window);
  const StepLog part = cut_step_log(p.full, c.cut);
  p.curve = aggregate(part, p.window);
  p.last_step = static_cast<double>(part.rows.back().step);
  p.origin = std::max(0.0, c.restart_at);
  if (c.restart_at < 0) {
    if (c.options.after_warmup && p.record) p.origin = p.record->warmup_steps();
    if (c.options.detect_change) p.origin = std::max(p.origin, detect_schedule_change(p.curve.step, p.curve.loss));
  }
  p.fit = fit_loss(p.curve.step, p.curve.loss, p.origin, c.options.fit);
  p.steps_per_epoch = p.record ? p.record->steps_per_epoch() : 0;
  return p;
}

// The fit, and when it has converged.
nlohmann::json report_fitted_part(const FitRequest& c, const FittedPart& p, std::FILE* out) {
  const LossFit& fit = p.fit;
  std::fprintf(out, "%s: %zu steps, fitted %.0f%% (to step %.0f) in windows of %d steps, %d points%s\n",
               c.log.c_str(), p.full.rows.size(), 100 * c.cut, p.last_step, p.window, fit.points,
               p.origin > 0 ? (", after step " + std::to_string(static_cast<long>(p.origin)) + " (warm-up end or schedule change)").c_str()
                            : "");
  std::fprintf(out, "loss model l(k) = (b0 k + b1)^-a + b2 (%s, %s weighting), k = step - %.0f: b0 %.6g  b1 %.6g  b2 %.6g  a %.4g  RMSE %.4g  R^2 %.4f\n",
               curve_model_name(c.options.fit.model), weighting_name(c.options.fit.weighting), p.origin, fit.b.b0,
               fit.b.b1, fit.b.b2, fit.b.a, fit.rmse, fit.r2);
  const double gap_step = steps_to_gap_fraction(fit, p.last_step, c.gap_fraction);
  const double per = p.steps_per_epoch > 0 ? p.steps_per_epoch : 100;
  const double slow_step = steps_to_relative_change(fit, p.last_step, c.relative_change, per);
  std::fprintf(out, "converged: gap to the asymptote %.3g of today's at step %.0f; loss falling < %.3g%% per %s at step %.0f\n",
               c.gap_fraction, gap_step, 100 * c.relative_change, p.steps_per_epoch > 0 ? "epoch" : "100 steps",
               slow_step);
  return {{"log", c.log},     {"steps", p.full.rows.size()}, {"cut", c.cut},
          {"model", curve_model_name(c.options.fit.model)},
          {"weighting", weighting_name(c.options.fit.weighting)},
          {"last_step", p.last_step}, {"window", p.window}, {"fit", fit_json(fit)},
          {"converged", {{"gap_fraction", c.gap_fraction}, {"gap_step", finite_or_null(gap_step)},
                         {"relative_change", c.relative_change}, {"relative_change_step", finite_or_null(slow_step)}}}};
}

// The loss to forecast to: --target-loss, or the loss where the whole log (or
// else the --with-run runs) reaches --target-acc; and the real run's step there.
struct Target {
  double loss = 0, real_step = -1;
};

Target find_target(const FitRequest& c, const FittedPart& p, std::FILE* out) {
  Target t{c.target_loss, -1};
  if (c.target_acc <= 0) return t;
  const Crossing crossing = first_reaching_accuracy(p.full_curve, c.target_acc);
  if (crossing.step >= 0) {
    t.loss = crossing.loss;
    t.real_step = crossing.step;
    std::fprintf(out, "target: %.2f%% training accuracy, reached at step %.0f with loss %.4f (whole log, monotone fits)\n",
                 c.target_acc, crossing.step, t.loss);
    return t;
  }
  check(!p.members.empty(), c.log + ": the log never reaches " + std::to_string(c.target_acc) +
                                "% training accuracy (monotone fit of windows of " + std::to_string(p.window) +
                                " steps), so it gives no target loss: pass --target-loss, or --with-run");
  for (const Member& m : p.members) t.loss += m.crossing.loss / static_cast<double>(p.members.size());
  std::fprintf(out, "target: %.2f%% training accuracy, at loss %.4f (the mean of the --with-run runs' losses there; "
               "this log does not reach it)\n", c.target_acc, t.loss);
  return t;
}

// The steps to the target from the fit alone, with the bootstrap's band.
void report_own_forecast(const FitRequest& c, const FittedPart& p, const Target& t, std::FILE* out,
                         nlohmann::json& j) {
  const StepsForecast f = forecast_steps_to_loss(p.curve, p.fit, t.loss, c.options.replicates, c.options.seed,
                                                 c.options.fit);
  std::fprintf(out, "steps to loss %.4f: %.0f (P10 %.0f, P50 %.0f, P90 %.0f)", t.loss, f.point, f.band.p10,
               f.band.p50, f.band.p90);
  if (p.steps_per_epoch > 0) std::fprintf(out, ", %.2f epochs", f.point / p.steps_per_epoch);
  if (p.record) std::fprintf(out, ", %.0f s at %.3f s/step", f.point * p.record->seconds_per_step(p.last_step),
                             p.record->seconds_per_step(p.last_step));
  std::fprintf(out, "\n");
  if (t.real_step > 0)
    std::fprintf(out, "the real run: step %.0f; forecast error %+.1f%%, %s the P10-P90 band\n", t.real_step,
                 100 * (f.point - t.real_step) / t.real_step, f.band.contains(t.real_step) ? "inside" : "outside");
  j["target"] = {{"loss", t.loss}, {"steps", finite_or_null(f.point)}, {"band", band_json(f.band)}};
  if (p.steps_per_epoch > 0) j["target"]["epochs"] = finite_or_null(f.point / p.steps_per_epoch);
  if (p.record) j["target"]["seconds"] = finite_or_null(f.point * p.record->seconds_per_step(p.last_step));
  if (t.real_step > 0) j["target"]["real_steps"] = t.real_step, j["target"]["accuracy"] = c.target_acc;
}

// The same forecast of each member from the others, cut where this log is,
// against its real step (with a target accuracy and 3 runs or more): the band.
std::vector<Hindcast> member_hindcasts(const FitRequest& c, const FittedPart& p, double mean_step) {
  std::vector<Hindcast> hindcasts;
  const std::vector<Member>& members = p.members;
  if (c.target_acc <= 0 || members.size() < 3) return hindcasts;
  for (size_t i = 0; i < members.size(); ++i) {
    const Member& m = members[i];
    const double fraction = std::min(1.0, p.last_step / static_cast<double>(m.run.log.rows.back().step));
    const Curve part = aggregate(cut_step_log(m.run.log, fraction), study_window(m.run, c.options));
    const double steps = forecast_from_family(part, m.fit.origin, family_from(members, i, c.depth), m.crossing.loss,
                                              c.options.fit.weighting, 100 * p.last_step)
                             .steps;
    const double rest_mean = (mean_step * static_cast<double>(members.size()) - m.crossing.step) /
                             static_cast<double>(members.size() - 1);
    hindcasts.push_back({steps, rest_mean, m.crossing.step});
  }
  return hindcasts;
}

// The steps to the target from the --with-run runs' curves, and blended with
// their mean step as far as their own hindcasts earn.
void report_family_forecast(const FitRequest& c, const FittedPart& p, const Target& t, std::FILE* out,
                            nlohmann::json& j) {
  const std::vector<Member>& members = p.members;
  const FamilyForecast f = forecast_from_family(p.curve, p.origin, family_from(members, members.size(), c.depth),
                                                t.loss, c.options.fit.weighting, 100 * p.last_step);
  double mean_step = 0;
  for (const Member& m : members) mean_step += m.crossing.step / static_cast<double>(members.size());
  const JudgedForecast judged = judge_by_hindcasts(f.steps, mean_step, member_hindcasts(c, p, mean_step));
  const Band& band = judged.band;
  std::fprintf(out, "with the %zu other runs (%s): steps to loss %.4f: %.0f (band %.0f-%.0f from their own errors), "
               "stretch %.3f, shift %+.4f\n", members.size(), c.depth >= 0 ? "weighted by depth" : "alike",
               t.loss, f.steps, band.p10, band.p90, f.scale, f.shift);
  if (t.real_step > 0)
    std::fprintf(out, "the real run: step %.0f; forecast error %+.1f%%, %s the band\n", t.real_step,
                 100 * (f.steps - t.real_step) / t.real_step, band.contains(t.real_step) ? "inside" : "outside");
  j["with_other_runs"] = {{"runs", c.with_runs}, {"loss", t.loss}, {"steps", finite_or_null(f.steps)},
                          {"band", band_json(band)}, {"stretch", f.scale}, {"shift", f.shift}};
  if (!judged.has_blend) return;
  const double weight = judged.blend_weight, steps = judged.blend_steps;
  const Band& blend_band = judged.blend_band;
  std::fprintf(out, "blended with their mean step %.0f (weight %.2f on the forecast, from their own forecasts): %.0f "
               "(band %.0f-%.0f)\n", mean_step, weight, steps, blend_band.p10, blend_band.p90);
  if (t.real_step > 0)
    std::fprintf(out, "the real run: step %.0f; blended error %+.1f%%, %s the band\n", t.real_step,
                 100 * (steps - t.real_step) / t.real_step, blend_band.contains(t.real_step) ? "inside" : "outside");
  j["blended"] = {{"mean_steps", mean_step}, {"weight", weight}, {"steps", finite_or_null(steps)},
                  {"band", band_json(blend_band)}};
}

}  // namespace

void report_fit(const FitRequest& c, std::FILE* out) {
  const FittedPart part = fit_part(c);
  nlohmann::json j = report_fitted_part(c, part, out);
  const Target target = find_target(c, part, out);
  if (target.loss > 0) report_own_forecast(c, part, target, out, j);
  if (!part.members.empty() && target.loss > 0) report_family_forecast(c, part, target, out, j);
  if (!c.json.empty()) write_text_output(c.json, j.dump(2) + "\n");
}

}  // namespace octet
