#include "forecast/study_report.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/svg_plot.h"
#include "forecast/report_json.h"

namespace octet {

namespace {

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

// A cut's forecast errors over the runs that reach the target after it, and
// how many of them the band held: alone, from the other runs, blended.
struct CutTally {
  std::vector<double> errors, family_errors, blended_errors;
  int inside = 0, family_inside = 0, blended_inside = 0;
};

// One cut of a run: its line(s) and JSON; the tally counts it when the target
// lies after the cut.
nlohmann::json report_cut(const RunStudy& r, const CutForecast& k, std::FILE* out, CutTally& tally) {
  const bool ahead = k.last_step < r.real_step;  // the cut ends before the run reaches the target
  std::fprintf(out, "    from %3.0f%% (step %5.0f): %7.0f steps, P10-P90 %7.0f-%-7.0f error %8s %s%s", 100 * k.fraction,
               k.last_step, k.steps.point, k.steps.band.p10, k.steps.band.p90, percent(k.error).c_str(),
               k.inside ? "inside" : "outside", ahead ? "" : " (target already inside the cut)");
  if (k.seconds >= 0) std::fprintf(out, "  %.0f s (real %.0f s)", k.seconds, r.real_seconds);
  std::fprintf(out, "\n");
  if (ahead) {
    tally.errors.push_back(k.error);
    tally.inside += k.inside;
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
      tally.family_errors.push_back(k.family_error);
      tally.family_inside += k.family_inside;
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
      tally.blended_errors.push_back(k.blend_error);
      tally.blended_inside += k.blend_inside;
    }
    cut_row["blended"] = {{"steps", finite_or_null(k.blend_steps)}, {"band", band_json(k.blend_band)},
                          {"error", finite_or_null(k.blend_error)}, {"inside", k.blend_inside},
                          {"weight", k.blend_weight}};
  }
  return cut_row;
}

// One run: its fit's row, then each cut; the baseline's error joins `baseline_errors`.
nlohmann::json report_run(const StudyRequest& c, const RunStudy& r, std::FILE* out, std::vector<CutTally>& tallies,
                          std::vector<double>& baseline_errors) {
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
  for (size_t i = 0; i < r.cuts.size(); ++i) cut_rows.push_back(report_cut(r, r.cuts[i], out, tallies[i]));
  row["cuts"] = cut_rows;
  if (r.others_mean_step > 0) {
    std::fprintf(out, "    baseline, the other runs' mean step: %7.0f, error %8s\n", r.others_mean_step,
                 percent(r.others_mean_error).c_str());
    row["others_mean_steps"] = r.others_mean_step;
    row["others_mean_error"] = r.others_mean_error;
    baseline_errors.push_back(r.others_mean_error);
  }
  return row;
}

// Each cut's median error over the runs, and how often the band held.
nlohmann::json report_cut_summary(double fraction, const CutTally& t, std::FILE* out) {
  std::fprintf(out, "from %.0f%% of each run that reaches the target after it: median |error| of steps to target %s, real value inside P10-P90 in %d of %zu runs\n",
               100 * fraction, median_text(t.errors).c_str(), t.inside, t.errors.size());
  nlohmann::json row = {{"fraction", fraction}, {"median_abs_error", finite_or_null(median_abs(t.errors))},
                        {"inside", t.inside}, {"runs", t.errors.size()}};
  if (!t.family_errors.empty()) {
    std::fprintf(out, "  with the other runs' curves: median |error| %s, real value inside the band from the others' errors in %d of %zu runs\n",
                 median_text(t.family_errors).c_str(), t.family_inside, t.family_errors.size());
    row["with_other_runs"] = {{"median_abs_error", finite_or_null(median_abs(t.family_errors))},
                              {"inside", t.family_inside}, {"runs", t.family_errors.size()}};
  }
  if (!t.blended_errors.empty()) {
    std::fprintf(out, "  blended with the other runs' mean step: median |error| %s, real value inside the band in %d of %zu runs\n",
                 median_text(t.blended_errors).c_str(), t.blended_inside, t.blended_errors.size());
    row["blended"] = {{"median_abs_error", finite_or_null(median_abs(t.blended_errors))},
                      {"inside", t.blended_inside}, {"runs", t.blended_errors.size()}};
  }
  return row;
}

// The depth regression's leave-one-out tables, and the plot.
void report_depth_and_plot(const StudyRequest& c, const Study& study, std::FILE* out) {
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
}

}  // namespace

void report_study(const StudyRequest& c, std::FILE* out) {
  std::vector<StudyRun> runs;
  for (const std::string& spec : c.runs) runs.push_back(read_study_run(spec, "--run"));
  const Study study = run_study(runs, c.options);

  std::fprintf(out, "loss model: %s, %s weighting\n", curve_model_name(c.options.fit.model),
               weighting_name(c.options.fit.weighting));
  std::fprintf(out, "target: %.2f%% training accuracy (monotone fit of the step-log windows); target loss: each run's loss there\n",
               study.target_acc);
  std::fprintf(out, "%-12s %6s %6s %10s %10s %8s %6s %7s %9s %8s\n", "run", "depth", "steps", "b0", "b1", "b2", "a",
               "R^2", "to target", "epochs");
  nlohmann::json run_rows = nlohmann::json::array();
  std::vector<CutTally> tallies(c.options.cuts.size());
  std::vector<double> baseline_errors;
  for (const RunStudy& r : study.runs) run_rows.push_back(report_run(c, r, out, tallies, baseline_errors));
  nlohmann::json summary = nlohmann::json::array();
  for (size_t i = 0; i < c.options.cuts.size(); ++i)
    summary.push_back(report_cut_summary(c.options.cuts[i], tallies[i], out));
  if (!baseline_errors.empty())
    std::fprintf(out, "baseline without forecasting (each run's step taken as the other runs' mean): median |error| %.1f%%\n",
                 100 * median_abs(baseline_errors));
  report_depth_and_plot(c, study, out);
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

}  // namespace octet
