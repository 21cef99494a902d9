// `octet forecast`: Optimus-style forecasts (Peng et al., EuroSys 2018) from
// octet train's own logs: `fit` one run's loss curve and forecast the rest from
// its first part; `study` the lab over several runs (cuts against the real
// runs, the depth regression's held-out depths); `speed` the time to a target
// over workers and parameter servers. The fitting lives in forecast/.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/error.h"
#include "common/file_io.h"
#include "common/svg_plot.h"
#include "forecast/forecast.h"
#include "forecast/speed_model.h"
#include "forecast/study.h"
#include "forecast/train_record.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {

// JSON has no infinity: a forecast that is never reached is null.
nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json params_json(const LossParams& b) { return {{"b0", b.b0}, {"b1", b.b1}, {"b2", b.b2}, {"a", b.a}}; }

nlohmann::json fit_json(const LossFit& f) {
  return {{"b", params_json(f.b)}, {"origin", f.origin}, {"rmse", f.rmse}, {"r2", f.r2}, {"points", f.points}};
}

nlohmann::json band_json(const Band& b) {
  return {{"p10", finite_or_null(b.p10)}, {"p50", finite_or_null(b.p50)}, {"p90", finite_or_null(b.p90)}};
}

// The record next to a step log (x.csv -> x.json) when octet train wrote one;
// an epoch record is its own.
std::optional<TrainRecord> record_beside(const std::string& log_path) {
  const size_t dot = log_path.rfind('.');
  const std::string path = (dot == std::string::npos ? log_path : log_path.substr(0, dot)) + ".json";
  if (!file_exists(path)) return std::nullopt;
  return read_train_record(path);
}

void add_fit_options(CLI::App* cmd, StudyOptions& o) {
  cmd->add_option("--window", o.window, "Steps averaged into one fitted point (0: about 100 points per log)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--bootstrap", o.replicates, "Residual-bootstrap refits for the P10/P50/P90 band")
      ->capture_default_str()
      ->check(CLI::Range(10, 100000));
  cmd->add_option("--seed", o.seed, "Bootstrap seed")->capture_default_str();
  cmd->add_flag("--detect-change", o.detect_change,
                "Look for a learning-rate schedule change (warm-up end, milestone) and fit after it");
  cmd->add_flag("!--keep-warmup", o.after_warmup,
                "Fit the learning-rate warm-up too (by default the fit starts where the run's record says it ended)");
  cmd->add_option_function<std::string>(
         "--weighting", [&o](const std::string& name) { o.fit.weighting = parse_weighting(name); },
         "late: window i weighted by k_i / loss_i^2 (relative residuals, the recent trend counts most); even: plain")
      ->default_str("late");
  cmd->add_flag("!--no-robust", o.fit.robust, "Plain least squares instead of Huber's loss");
  cmd->add_option_function<std::string>(
         "--model", [&o](const std::string& name) { o.fit.model = parse_curve_model(name); },
         "Loss model: optimus, 1/(b0 k + b1) + b2; or power, (b0 k + b1)^-a + b2 with the exponent a fitted")
      ->default_str("power");
}

// A step log, or an epoch record (.json) read as one point per epoch.
StepLog read_curve_source(const std::string& path) {
  const bool record = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return record ? epoch_log(read_train_record(path)) : read_step_log(path);
}

// ---- fit ----------------------------------------------------------------

// NAME=PATH, the depth being the digits NAME ends with (resnet56 -> 56).
StudyRun parse_run(const std::string& spec, const std::string& option = "--run") {
  const size_t eq = spec.find('=');
  check(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(),
        option + " '" + spec + "': expected NAME=STEP_LOG, e.g. resnet20=forecast/logs/resnet20.csv");
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


// A complete run of the family that `fit --with-run` forecasts with.
struct Member {
  StudyRun run;
  Curve curve;
  LossFit fit;
  Crossing crossing;  // of the target accuracy, when one is given
};

Member fit_member(const std::string& spec, const StudyOptions& o, double target_acc) {
  Member m{parse_run(spec, "--with-run"), {}, {}, {}};
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

struct FitCommand {
  std::string log, record, json;
  std::vector<std::string> with_runs;
  double depth = -1;
  double cut = 1, target_acc = 0, target_loss = 0, restart_at = -1;
  double gap_fraction = 0.05, relative_change = 0.01;
  StudyOptions options;
};

void run_fit(const FitCommand& c) {
  std::FILE* out = report_stream(c.json);
  const StepLog full = read_curve_source(c.log);
  std::optional<TrainRecord> record = c.record.empty() ? record_beside(c.log) : read_train_record(c.record);
  check(c.target_acc <= 0 || c.target_loss <= 0, "give --target-acc or --target-loss, not both");
  check(c.with_runs.empty() || c.with_runs.size() >= 2, "--with-run: give at least 2 complete runs of the family");
  std::vector<Member> members;
  for (const std::string& spec : c.with_runs) members.push_back(fit_member(spec, c.options, c.target_acc));
  const int window = c.options.window > 0 ? c.options.window : default_window(full.rows.size());
  const Curve full_curve = aggregate(full, window);
  const StepLog part = cut_step_log(full, c.cut);
  const Curve curve = aggregate(part, window);
  const double last_step = static_cast<double>(part.rows.back().step);
  double origin = std::max(0.0, c.restart_at);
  if (c.restart_at < 0) {
    if (c.options.after_warmup && record) origin = record->warmup_steps();
    if (c.options.detect_change) origin = std::max(origin, detect_schedule_change(curve.step, curve.loss));
  }
  const LossFit fit = fit_loss(curve.step, curve.loss, origin, c.options.fit);
  const double steps_per_epoch = record ? record->steps_per_epoch() : 0;

  std::fprintf(out, "%s: %zu steps, fitted %.0f%% (to step %.0f) in windows of %d steps, %d points%s\n",
               c.log.c_str(), full.rows.size(), 100 * c.cut, last_step, window, fit.points,
               origin > 0 ? (", after step " + std::to_string(static_cast<long>(origin)) + " (warm-up end or schedule change)").c_str()
                          : "");
  std::fprintf(out, "loss model l(k) = (b0 k + b1)^-a + b2 (%s, %s weighting), k = step - %.0f: b0 %.6g  b1 %.6g  b2 %.6g  a %.4g  RMSE %.4g  R^2 %.4f\n",
               curve_model_name(c.options.fit.model), weighting_name(c.options.fit.weighting), origin, fit.b.b0,
               fit.b.b1, fit.b.b2, fit.b.a, fit.rmse, fit.r2);
  const double gap_step = steps_to_gap_fraction(fit, last_step, c.gap_fraction);
  const double per = steps_per_epoch > 0 ? steps_per_epoch : 100;
  const double slow_step = steps_to_relative_change(fit, last_step, c.relative_change, per);
  std::fprintf(out, "converged: gap to the asymptote %.3g of today's at step %.0f; loss falling < %.3g%% per %s at step %.0f\n",
               c.gap_fraction, gap_step, 100 * c.relative_change, steps_per_epoch > 0 ? "epoch" : "100 steps",
               slow_step);

  nlohmann::json j = {{"log", c.log},     {"steps", full.rows.size()}, {"cut", c.cut},
                      {"model", curve_model_name(c.options.fit.model)},
                      {"weighting", weighting_name(c.options.fit.weighting)},
                      {"last_step", last_step}, {"window", window}, {"fit", fit_json(fit)},
                      {"converged", {{"gap_fraction", c.gap_fraction}, {"gap_step", finite_or_null(gap_step)},
                                     {"relative_change", c.relative_change}, {"relative_change_step", finite_or_null(slow_step)}}}};
  double target_loss = c.target_loss;
  double real_step = -1;
  if (c.target_acc > 0) {
    const Crossing crossing = first_reaching_accuracy(full_curve, c.target_acc);
    if (crossing.step >= 0) {
      target_loss = crossing.loss;
      real_step = crossing.step;
      std::fprintf(out, "target: %.2f%% training accuracy, reached at step %.0f with loss %.4f (whole log, monotone fits)\n",
                   c.target_acc, crossing.step, target_loss);
    } else {
      check(!members.empty(), c.log + ": the log never reaches " + std::to_string(c.target_acc) +
                                  "% training accuracy (monotone fit of windows of " + std::to_string(window) +
                                  " steps), so it gives no target loss: pass --target-loss, or --with-run");
      for (const Member& m : members) target_loss += m.crossing.loss / static_cast<double>(members.size());
      std::fprintf(out, "target: %.2f%% training accuracy, at loss %.4f (the mean of the --with-run runs' losses there; "
                   "this log does not reach it)\n", c.target_acc, target_loss);
    }
  }
  if (target_loss > 0) {
    const StepsForecast f = forecast_steps_to_loss(curve, fit, target_loss, c.options.replicates, c.options.seed,
                                                   c.options.fit);
    std::fprintf(out, "steps to loss %.4f: %.0f (P10 %.0f, P50 %.0f, P90 %.0f)", target_loss, f.point, f.band.p10,
                 f.band.p50, f.band.p90);
    if (steps_per_epoch > 0) std::fprintf(out, ", %.2f epochs", f.point / steps_per_epoch);
    if (record) std::fprintf(out, ", %.0f s at %.3f s/step", f.point * record->seconds_per_step(last_step),
                             record->seconds_per_step(last_step));
    std::fprintf(out, "\n");
    if (real_step > 0)
      std::fprintf(out, "the real run: step %.0f; forecast error %+.1f%%, %s the P10-P90 band\n", real_step,
                   100 * (f.point - real_step) / real_step, f.band.contains(real_step) ? "inside" : "outside");
    j["target"] = {{"loss", target_loss}, {"steps", finite_or_null(f.point)}, {"band", band_json(f.band)}};
    if (steps_per_epoch > 0) j["target"]["epochs"] = finite_or_null(f.point / steps_per_epoch);
    if (record) j["target"]["seconds"] = finite_or_null(f.point * record->seconds_per_step(last_step));
    if (real_step > 0) j["target"]["real_steps"] = real_step, j["target"]["accuracy"] = c.target_acc;
  }
  if (!members.empty() && target_loss > 0) {
    const FamilyForecast f = forecast_from_family(curve, origin, family_from(members, members.size(), c.depth),
                                                  target_loss, c.options.fit.weighting, 100 * last_step);
    // The band: the same forecast of each member from the others, cut where
    // this log is, against its real step (with a target accuracy and 3 runs or more).
    std::vector<Hindcast> hindcasts;
    double mean_step = 0;
    for (const Member& m : members) mean_step += m.crossing.step / static_cast<double>(members.size());
    if (c.target_acc > 0 && members.size() >= 3)
      for (size_t i = 0; i < members.size(); ++i) {
        const Member& m = members[i];
        const double fraction = std::min(1.0, last_step / static_cast<double>(m.run.log.rows.back().step));
        const Curve part = aggregate(cut_step_log(m.run.log, fraction), study_window(m.run, c.options));
        const double steps = forecast_from_family(part, m.fit.origin, family_from(members, i, c.depth),
                                                  m.crossing.loss, c.options.fit.weighting, 100 * last_step)
                                 .steps;
        const double rest_mean = (mean_step * static_cast<double>(members.size()) - m.crossing.step) /
                                 static_cast<double>(members.size() - 1);
        hindcasts.push_back({steps, rest_mean, m.crossing.step});
      }
    const JudgedForecast judged = judge_by_hindcasts(f.steps, mean_step, hindcasts);
    const Band& band = judged.band;
    std::fprintf(out, "with the %zu other runs (%s): steps to loss %.4f: %.0f (band %.0f-%.0f from their own errors), "
                 "stretch %.3f, shift %+.4f\n", members.size(), c.depth >= 0 ? "weighted by depth" : "alike",
                 target_loss, f.steps, band.p10, band.p90, f.scale, f.shift);
    if (real_step > 0)
      std::fprintf(out, "the real run: step %.0f; forecast error %+.1f%%, %s the band\n", real_step,
                   100 * (f.steps - real_step) / real_step, band.contains(real_step) ? "inside" : "outside");
    j["with_other_runs"] = {{"runs", c.with_runs}, {"loss", target_loss}, {"steps", finite_or_null(f.steps)},
                            {"band", band_json(band)}, {"stretch", f.scale}, {"shift", f.shift}};
    if (judged.has_blend) {
      const double weight = judged.blend_weight, steps = judged.blend_steps;
      const Band& blend_band = judged.blend_band;
      std::fprintf(out, "blended with their mean step %.0f (weight %.2f on the forecast, from their own forecasts): %.0f "
                   "(band %.0f-%.0f)\n", mean_step, weight, steps, blend_band.p10, blend_band.p90);
      if (real_step > 0)
        std::fprintf(out, "the real run: step %.0f; blended error %+.1f%%, %s the band\n", real_step,
                     100 * (steps - real_step) / real_step, blend_band.contains(real_step) ? "inside" : "outside");
      j["blended"] = {{"mean_steps", mean_step}, {"weight", weight}, {"steps", finite_or_null(steps)},
                      {"band", band_json(blend_band)}};
    }
  }
  if (!c.json.empty()) write_text_output(c.json, j.dump(2) + "\n");
}

// ---- study --------------------------------------------------------------

struct StudyCommand {
  std::vector<std::string> runs;
  std::string held_out, svg, json;
  StudyOptions options;
};

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::isfinite(x) ? "%+.1f%%" : "never", 100 * x);
  return buf;
}

// A median over forecasts some of which never reach the target: infinite when
// half or more never do, which reads better as words than as "inf%".
std::string median_text(const std::vector<double>& errors) {
  const double m = median_abs(errors);
  if (std::isfinite(m)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * m);
    return buf;
  }
  const auto never = std::count_if(errors.begin(), errors.end(), [](double e) { return !std::isfinite(e); });
  return "undefined (" + std::to_string(never) + " of " + std::to_string(errors.size()) + " forecasts never reach the target)";
}

void print_depth(std::FILE* out, const char* kernel, const std::vector<DepthForecast>& forecasts,
                 const Study& study) {
  std::vector<double> coefficient_errors, curve_errors;
  std::fprintf(out, "\ndepth regression (%s), each run left out in turn: its coefficients (log b0, b1, b2, a) "
               "or its curve (the others' log losses) from the other depths:\n", kernel);
  std::fprintf(out, "  %-12s %6s %10s %10s %8s %6s %9s %9s %8s %9s %8s\n", "run", "depth", "b0", "b1", "b2", "a",
               "real", "coef", "error", "curves", "error");
  for (const DepthForecast& f : forecasts) {
    double real = 0;
    for (const RunStudy& r : study.runs)
      if (r.name == f.name) real = r.real_step;
    const LossParams& b = f.coefficients.b;
    std::fprintf(out, "  %-12s %6.0f %10.4g %10.4g %8.4f %6.3f %9.0f %9.0f %8s %9.0f %8s  curve error %.1f%% / %.1f%%\n",
                 f.name.c_str(), f.depth, b.b0, b.b1, b.b2, b.a, real, f.from_coefficients.steps,
                 percent(f.from_coefficients.error).c_str(), f.from_curves.steps, percent(f.from_curves.error).c_str(),
                 100 * f.from_coefficients.curve_error, 100 * f.from_curves.curve_error);
    coefficient_errors.push_back(f.from_coefficients.error);
    curve_errors.push_back(f.from_curves.error);
  }
  std::fprintf(out, "  median |error| of steps to target: from coefficients %.1f%%, from curves %.1f%%\n",
               100 * median_abs(coefficient_errors), 100 * median_abs(curve_errors));
}

nlohmann::json prediction_json(const DepthPrediction& p) {
  return {{"steps", finite_or_null(p.steps)}, {"error", finite_or_null(p.error)}, {"curve_error", p.curve_error}};
}

nlohmann::json depth_json(const std::vector<DepthForecast>& forecasts) {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> coefficient_errors, curve_errors;
  for (const DepthForecast& f : forecasts) {
    rows.push_back({{"run", f.name},
                    {"depth", f.depth},
                    {"target_loss", f.target_loss},
                    {"coefficients", {{"b", params_json(f.coefficients.b)}, {"origin", f.coefficients.origin}}},
                    {"from_coefficients", prediction_json(f.from_coefficients)},
                    {"from_curves", prediction_json(f.from_curves)}});
    coefficient_errors.push_back(f.from_coefficients.error);
    curve_errors.push_back(f.from_curves.error);
  }
  return {{"runs", rows},
          {"median_abs_error_from_coefficients", finite_or_null(median_abs(coefficient_errors))},
          {"median_abs_error_from_curves", finite_or_null(median_abs(curve_errors))}};
}

// Real loss of each run (points), the fit from half of it, and for the held-out
// depth its half-run forecast with the other runs and its curve forecast from
// the other depths alone (dashed; ridge and rbf).
std::string study_svg(const Study& study, const std::string& held_out) {
  static const char* colors[] = {"#3b6ea5", "#c0504d", "#4f8f3a", "#8064a2", "#e07b00", "#2b9ca8", "#7f7f7f"};
  std::vector<SvgSeries> series;
  size_t n = 0;
  for (const RunStudy& r : study.runs) {
    const std::string color = colors[n++ % 7];
    series.push_back({r.name + " (log)", r.curve.step, r.curve.loss, color, false, true});
    for (const CutForecast& c : r.cuts)
      if (std::abs(c.fraction - 0.5) < 1e-9) {
        SvgSeries fit{r.name + ": fit of 1st half", {}, {}, color};
        for (double s : r.curve.step)
          if (s > c.fit.origin) fit.x.push_back(s), fit.y.push_back(c.fit.at(s));
        series.push_back(fit);
        if (r.name == held_out && c.has_family)
          series.push_back({r.name + ": 1st half with the other runs", c.family_curve_step, c.family_curve, color, true});
      }
    if (r.name != held_out) continue;
    for (const auto* forecasts : {&study.ridge, &study.rbf})
      for (const DepthForecast& f : *forecasts)
        if (f.name == r.name)
          series.push_back({r.name + ": from other depths (" + (forecasts == &study.ridge ? "ridge" : "rbf") + ")",
                            f.curve_step, f.curve, color, true});
  }
  return line_chart_svg("training loss: logs, half-run fits, held-out depth", series, "step", "loss");
}

void run_study_command(const StudyCommand& c) {
  std::FILE* out = report_stream(c.json);
  std::vector<StudyRun> runs;
  for (const std::string& spec : c.runs) runs.push_back(parse_run(spec));
  const Study study = run_study(runs, c.options);

  std::fprintf(out, "loss model: %s, %s weighting\n", curve_model_name(c.options.fit.model),
               weighting_name(c.options.fit.weighting));
  std::fprintf(out, "target: %.2f%% training accuracy (monotone fit of the step-log windows); target loss: each run's loss there\n",
               study.target_acc);
  std::fprintf(out, "%-12s %6s %6s %10s %10s %8s %6s %7s %9s %8s\n", "run", "depth", "steps", "b0", "b1", "b2", "a",
               "R^2", "to target", "epochs");
  nlohmann::json run_rows = nlohmann::json::array();
  std::vector<std::vector<double>> errors(c.options.cuts.size());
  std::vector<int> inside(c.options.cuts.size(), 0);
  std::vector<std::vector<double>> family_errors(c.options.cuts.size());
  std::vector<int> family_inside(c.options.cuts.size(), 0);
  std::vector<std::vector<double>> blended_errors(c.options.cuts.size());
  std::vector<int> blended_inside(c.options.cuts.size(), 0);
  std::vector<double> baseline_errors;
  for (const RunStudy& r : study.runs) {
    const double total = r.curve.step.empty() ? 0 : r.curve.step.back();
    const std::string depth = c.options.depth_regression ? std::to_string(static_cast<long>(r.depth)) : "-";
    std::fprintf(out, "%-12s %6s %6.0f %10.4g %10.4g %8.4f %6.3f %7.4f %9s %8s\n", r.name.c_str(), depth.c_str(), total,
                 r.fit.b.b0, r.fit.b.b1, r.fit.b.b2, r.fit.b.a, r.fit.r2,
                 r.reaches ? std::to_string(static_cast<long>(r.real_step)).c_str() : "never",
                 r.reaches ? std::to_string(r.real_step / r.steps_per_epoch).substr(0, 5).c_str() : "-");
    nlohmann::json row = {{"run", r.name},   {"depth", r.depth},         {"fit", fit_json(r.fit)},
                          {"reaches", r.reaches}, {"steps_per_epoch", r.steps_per_epoch}};
    if (r.reaches) {
      row["real_steps"] = r.real_step;
      row["target_loss"] = r.target_loss;
      if (r.real_seconds >= 0) row["real_seconds"] = r.real_seconds;
    }
    nlohmann::json cut_rows = nlohmann::json::array();
    for (size_t i = 0; i < r.cuts.size(); ++i) {
      const CutForecast& k = r.cuts[i];
      const bool ahead = k.last_step < r.real_step;  // the cut ends before the run reaches the target
      std::fprintf(out, "    from %3.0f%% (step %5.0f): %7.0f steps, P10-P90 %7.0f-%-7.0f error %8s %s%s", 100 * k.fraction,
                   k.last_step, k.steps.point, k.steps.band.p10, k.steps.band.p90, percent(k.error).c_str(),
                   k.inside ? "inside" : "outside", ahead ? "" : " (target already inside the cut)");
      if (k.seconds >= 0) std::fprintf(out, "  %.0f s (real %.0f s)", k.seconds, r.real_seconds);
      std::fprintf(out, "\n");
      if (ahead) {
        errors[i].push_back(k.error);
        inside[i] += k.inside;
      }
      nlohmann::json cut_row = {{"fraction", k.fraction}, {"last_step", k.last_step}, {"fit", fit_json(k.fit)},
                                {"steps", finite_or_null(k.steps.point)}, {"band", band_json(k.steps.band)},
                                {"error", finite_or_null(k.error)}, {"inside", k.inside}, {"target_after_cut", ahead},
                                {"seconds", k.seconds >= 0 ? nlohmann::json(k.seconds) : nlohmann::json(nullptr)}};
      if (k.has_family) {
        const FamilyForecast& f = k.family;
        std::fprintf(out, "      with the other runs: %7.0f steps, band    %7.0f-%-7.0f error %8s %s  (stretch %.3f, shift %+.4f)\n",
                     f.steps, k.family_band.p10, k.family_band.p90, percent(k.family_error).c_str(),
                     k.family_inside ? "inside" : "outside", f.scale, f.shift);
        if (ahead) {
          family_errors[i].push_back(k.family_error);
          family_inside[i] += k.family_inside;
        }
        cut_row["with_other_runs"] = {{"steps", finite_or_null(f.steps)}, {"band", band_json(k.family_band)},
                                      {"error", finite_or_null(k.family_error)}, {"inside", k.family_inside},
                                      {"stretch", f.scale}, {"shift", f.shift}};
      }
      if (k.has_blend) {
        std::fprintf(out, "      blended with their mean: %7.0f steps, band    %7.0f-%-7.0f error %8s %s  (weight %.2f on the forecast)\n",
                     k.blend_steps, k.blend_band.p10, k.blend_band.p90, percent(k.blend_error).c_str(),
                     k.blend_inside ? "inside" : "outside", k.blend_weight);
        if (ahead) {
          blended_errors[i].push_back(k.blend_error);
          blended_inside[i] += k.blend_inside;
        }
        cut_row["blended"] = {{"steps", finite_or_null(k.blend_steps)}, {"band", band_json(k.blend_band)},
                              {"error", finite_or_null(k.blend_error)}, {"inside", k.blend_inside},
                              {"weight", k.blend_weight}};
      }
      cut_rows.push_back(cut_row);
    }
    row["cuts"] = cut_rows;
    if (r.others_mean_step > 0) {
      std::fprintf(out, "    baseline, the other runs' mean step: %7.0f, error %8s\n", r.others_mean_step,
                   percent(r.others_mean_error).c_str());
      row["others_mean_steps"] = r.others_mean_step;
      row["others_mean_error"] = r.others_mean_error;
      baseline_errors.push_back(r.others_mean_error);
    }
    run_rows.push_back(row);
  }
  nlohmann::json summary = nlohmann::json::array();
  for (size_t i = 0; i < c.options.cuts.size(); ++i) {
    std::fprintf(out, "from %.0f%% of each run that reaches the target after it: median |error| of steps to target %s, real value inside P10-P90 in %d of %zu runs\n",
                 100 * c.options.cuts[i], median_text(errors[i]).c_str(), inside[i], errors[i].size());
    nlohmann::json row = {{"fraction", c.options.cuts[i]}, {"median_abs_error", finite_or_null(median_abs(errors[i]))},
                          {"inside", inside[i]}, {"runs", errors[i].size()}};
    if (!family_errors[i].empty()) {
      std::fprintf(out, "  with the other runs' curves: median |error| %s, real value inside the band from the others' errors in %d of %zu runs\n",
                   median_text(family_errors[i]).c_str(), family_inside[i], family_errors[i].size());
      row["with_other_runs"] = {{"median_abs_error", finite_or_null(median_abs(family_errors[i]))},
                                {"inside", family_inside[i]}, {"runs", family_errors[i].size()}};
    }
    if (!blended_errors[i].empty()) {
      std::fprintf(out, "  blended with the other runs' mean step: median |error| %s, real value inside the band in %d of %zu runs\n",
                   median_text(blended_errors[i]).c_str(), blended_inside[i], blended_errors[i].size());
      row["blended"] = {{"median_abs_error", finite_or_null(median_abs(blended_errors[i]))},
                        {"inside", blended_inside[i]}, {"runs", blended_errors[i].size()}};
    }
    summary.push_back(row);
  }
  if (!baseline_errors.empty())
    std::fprintf(out, "baseline without forecasting (each run's step taken as the other runs' mean): median |error| %.1f%%\n",
                 100 * median_abs(baseline_errors));
  if (c.options.depth_regression && study.ridge.empty())
    std::fprintf(out, "\nno depth regression: it needs 3 runs that reach the target and hold 2 depths besides each\n");
  if (!study.ridge.empty()) {
    print_depth(out, "ridge", study.ridge, study);
    print_depth(out, "rbf kernel ridge", study.rbf, study);
  }
  std::string held_out = c.held_out;
  if (held_out.empty() && !study.ridge.empty()) {
    double deepest = -1;
    for (const DepthForecast& f : study.ridge)
      if (f.depth > deepest) deepest = f.depth, held_out = f.name;
  }
  if (!c.svg.empty()) {
    write_text_output(c.svg, study_svg(study, held_out));
    std::fprintf(out, "\nplot: %s\n", c.svg.c_str());
  }
  if (!c.json.empty())
    write_text_output(c.json, nlohmann::json({{"model", curve_model_name(c.options.fit.model)},
                                              {"weighting", weighting_name(c.options.fit.weighting)},
                                              {"target_acc", study.target_acc},
                                              {"runs", run_rows},
                                              {"cuts", summary},
                                              {"baseline_median_abs_error", finite_or_null(median_abs(baseline_errors))},
                                              {"depth_ridge", depth_json(study.ridge)},
                                              {"depth_rbf", depth_json(study.rbf)}})
                                      .dump(2) +
                                  "\n");
}

// ---- speed --------------------------------------------------------------

struct SpeedCommand {
  double steps = 0, batch = 128;
  int max_workers = 16;
  std::vector<double> servers = {2, 4};
  std::string step_times, svg, json;
};

void run_speed(const SpeedCommand& c) {
  std::FILE* out = report_stream(c.json);
  const bool fitted = !c.step_times.empty();
  const SpeedModel model = fitted ? fit_speed_model(read_step_times(c.step_times), c.batch) : paper_sync_speed_model();
  std::fprintf(out, "speed model f(p, w) = 1 / (t0 M/w + t1 + t2 w/p + t3 w + t4 p), M = %g: t = (%.4g, %.4g, %.4g, %.4g, %.4g)%s\n",
               model.batch, model.t[0], model.t[1], model.t[2], model.t[3], model.t[4],
               fitted ? (" fitted (NNLS) from " + c.step_times).c_str()
                      : " (Optimus's synchronous coefficients; time in their units)");
  // A model fitted from p = w probes only knows p = w: that is its one column.
  const std::vector<double> servers = model.p_equals_w ? std::vector<double>{0} : c.servers;
  if (model.p_equals_w)
    std::fprintf(out, "every probe had p = w: only t0, t1 + t2 (shown as t1) and t3 + t4 (shown as t3) are identifiable, "
                      "and only p = w can be forecast\n");
  std::fprintf(out, "time to target (%.0f steps):\n%8s", c.steps, "workers");
  for (double p : servers)
    if (p > 0) std::fprintf(out, "   p = %-6g", p);
    else std::fprintf(out, "   p = w     ");
  std::fprintf(out, "\n");
  std::vector<SvgSeries> series;
  static const char* colors[] = {"#3b6ea5", "#c0504d", "#4f8f3a", "#8064a2"};
  for (size_t i = 0; i < servers.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, servers[i] > 0 ? "p = %g" : "p = w", servers[i]);
    series.push_back({name, {}, {}, colors[i % 4]});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (int w = 1; w <= c.max_workers; ++w) {
    std::fprintf(out, "%8d", w);
    nlohmann::json row = {{"workers", w}};
    for (size_t i = 0; i < servers.size(); ++i) {
      const double p = servers[i] > 0 ? servers[i] : w;
      const double time = c.steps * model.step_time(p, w);
      std::fprintf(out, "   %-10.4g", time);
      series[i].x.push_back(w);
      series[i].y.push_back(time);
      row[servers[i] > 0 ? "time_p" + std::to_string(static_cast<int>(servers[i])) : std::string("time_p_equals_w")] = time;
    }
    std::fprintf(out, "\n");
    rows.push_back(row);
  }
  if (!c.svg.empty()) {
    write_text_output(c.svg, line_chart_svg("time to target vs workers", series, "workers w", "time to target"));
    std::fprintf(out, "plot: %s\n", c.svg.c_str());
  }
  if (!c.json.empty())
    write_text_output(c.json, nlohmann::json({{"t", model.t}, {"batch", model.batch}, {"fitted", fitted},
                                              {"p_equals_w_only", model.p_equals_w},
                                              {"steps", c.steps}, {"rows", rows}})
                                      .dump(2) +
                                  "\n");
}

}  // namespace

void add_forecast_command(CLI::App& app) {
  auto* forecast = app.add_subcommand(
      "forecast", "Optimus-style forecasts from octet train's step logs: loss curve, steps to a target, speed");
  forecast->require_subcommand(1);

  auto* fit = forecast->add_subcommand("fit", "Fit one run's loss curve (or its first part) and forecast the rest");
  auto f = std::make_shared<FitCommand>();
  fit->add_option("--log", f->log,
                  "Step log (octet train --step-log: epoch,step,loss,acc), or an epoch record (.json: one point per epoch)")->required();
  fit->add_option("--record", f->record, "Epoch record (octet train --json; default: the log's name with .json)");
  fit->add_option("--cut", f->cut, "Fit only this first fraction of the log")->capture_default_str()->check(
      CLI::Range(0.01, 1.0));
  fit->add_option("--target-acc", f->target_acc, "Target training accuracy (%): its loss is read off the whole log")
      ->check(CLI::Range(0.0, 100.0));
  fit->add_option("--target-loss", f->target_loss, "Target loss")->check(CLI::PositiveNumber);
  fit->add_option("--restart-at", f->restart_at, "A schedule change at this step: fit only after it");
  fit->add_option("--gap-fraction", f->gap_fraction, "Convergence: gap to the asymptote shrunk to this fraction")
      ->capture_default_str();
  fit->add_option("--relative-change", f->relative_change, "Convergence: loss falls by less than this per epoch")
      ->capture_default_str();
  fit->add_option("--with-run", f->with_runs,
                  "NAME=STEP_LOG of a complete run of the same family (other depths, seeds, learning rates): "
                  "forecast also from their curves, stretched and shifted to this log (at least 2), and with 3 or "
                  "more that forecast blended with their mean step as far as their own hindcasts earn");
  fit->add_option("--depth", f->depth, "This run's depth: weight the --with-run runs (names ending in their depth) "
                                       "by a ridge regression over depth (default: alike)")
      ->check(CLI::PositiveNumber);
  add_fit_options(fit, f->options);
  add_json_option(fit, f->json);
  fit->callback([f] { run_fit(*f); });

  auto* study = forecast->add_subcommand(
      "study", "The Optimus lab over several runs: forecasts from their first parts (alone, from the other "
               "runs, blended with their mean step), and over depth");
  auto s = std::make_shared<StudyCommand>();
  study->add_option("--run", s->runs, "NAME=STEP_LOG, NAME ending in the depth (resnet20=logs/resnet20.csv)")
      ->required();
  study->add_option("--target-acc", s->options.target_acc,
                    "Target training accuracy (%; default: the highest whole percent every run reaches)")
      ->check(CLI::Range(0.0, 100.0));
  study->add_option("--cuts", s->options.cuts, "Fractions of each run to forecast from")->capture_default_str()->delimiter(',');
  study->add_option("--lambda", s->options.lambda, "Ridge penalty of the depth regression")->capture_default_str();
  study->add_flag("!--no-depth", s->options.depth_regression,
                  "The runs are not a family of depths (seeds, learning rates): no depth regression");
  study->add_option("--held-out", s->held_out, "Run whose depth forecast the plot shows (default: the deepest)");
  study->add_option("--svg", s->svg, "Plot of the logs, half-run fits and the held-out depth's forecast");
  add_fit_options(study, s->options);
  add_json_option(study, s->json);
  study->callback([s] { run_study_command(*s); });

  auto* speed = forecast->add_subcommand("speed", "Time to a target over workers and parameter servers");
  auto p = std::make_shared<SpeedCommand>();
  speed->add_option("--steps", p->steps, "Steps to the target (e.g. from forecast fit)")->required()->check(
      CLI::PositiveNumber);
  speed->add_option("--step-times", p->step_times,
                    "CSV p,w,seconds of measured steps: fit t by NNLS (probes all with p = w: the reduced model, p = w only)");
  speed->add_option("--batch", p->batch, "Global batch M")->capture_default_str()->check(CLI::PositiveNumber);
  speed->add_option("--max-workers", p->max_workers, "Table rows w = 1..N")->capture_default_str()->check(
      CLI::Range(1, 1024));
  speed->add_option("--servers", p->servers, "Parameter-server counts p")->capture_default_str()->delimiter(',');
  speed->add_option("--svg", p->svg, "Plot of time to target vs workers");
  add_json_option(speed, p->json);
  speed->callback([p] { run_speed(*p); });
}

}  // namespace octet
