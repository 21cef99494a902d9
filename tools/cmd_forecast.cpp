// `octet forecast`: Optimus-style forecasts (Peng et al., EuroSys 2018) from
// octet train's own logs: `fit` one run's loss curve and forecast the rest from
// its first part; `study` the lab over several runs (cuts against the real
// runs, the depth regression's held-out depths); `speed` the time to a target
// over workers and parameter servers. The fitting and the reports live in
// forecast/ (fit_report.h, study_report.h, speed_report.h).
#include <memory>

#include "forecast/fit_report.h"
#include "forecast/speed_report.h"
#include "forecast/study_report.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace octet {

namespace {

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

}  // namespace

void add_forecast_command(CLI::App& app) {
  auto* forecast = app.add_subcommand(
      "forecast", "Optimus-style forecasts from octet train's step logs: loss curve, steps to a target, speed");
  forecast->require_subcommand(1);

  auto* fit = forecast->add_subcommand("fit", "Fit one run's loss curve (or its first part) and forecast the rest");
  auto f = std::make_shared<FitRequest>();
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
  fit->callback([f] { report_fit(*f, report_stream(f->json)); });

  auto* study = forecast->add_subcommand(
      "study", "The Optimus lab over several runs: forecasts from their first parts (alone, from the other "
               "runs, blended with their mean step), and over depth");
  auto s = std::make_shared<StudyRequest>();
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
  study->callback([s] { report_study(*s, report_stream(s->json)); });

  auto* speed = forecast->add_subcommand("speed", "Time to a target over workers and parameter servers");
  auto p = std::make_shared<SpeedRequest>();
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
  speed->callback([p] { report_speed(*p, report_stream(p->json)); });
}

}  // namespace octet
