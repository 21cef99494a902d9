// The Optimus lab as one computation over several runs' logs: each run's fit;
// from the first part of each run (cuts), the forecast steps to the target
// accuracy against the real run; and across runs, the depth regression's
// leave-one-out forecasts of a depth it has not seen; and each cut again from
// the other runs' complete curves (forecast/family_forecast.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "forecast/depth_regression.h"
#include "forecast/family_forecast.h"
#include "forecast/forecast.h"
#include "forecast/loss_model.h"
#include "forecast/step_log.h"
#include "forecast/train_record.h"

namespace octet {

struct StudyRun {
  std::string name;
  double depth = 0;
  StepLog log;
  std::optional<TrainRecord> record;  // for wall time
};

// A run from NAME=PATH (`option` names the option it came from): the depth is
// the digits NAME ends with (resnet56 -> 56), PATH a step log or an epoch
// record, with the record beside a step log when there is one.
StudyRun read_study_run(const std::string& spec, const std::string& option);

struct StudyOptions {
  // Training top-1, percent, of the aggregated step log; 0: the highest whole
  // percent every run reaches (monotone fit), the most demanding target all share.
  double target_acc = 0;
  std::vector<double> cuts = {0.25, 0.5};
  int window = 0;  // 0: default_window of each run's full log
  int replicates = 200;
  uint64_t seed = 1;
  bool detect_change = false;  // look for a schedule change in each fitted part
  bool after_warmup = true;    // fit only after the warm-up the run's record names
  bool depth_regression = true;  // false: the runs are not a depth family (seeds, learning rates)
  LossFitOptions fit;
  double lambda = 1e-3;
};

struct CutForecast {
  double fraction = 0;
  double last_step = 0;  // the cut's last step
  double change = 0;     // schedule change found in the cut (0: none)
  LossFit fit;
  StepsForecast steps;
  double error = 0;  // (forecast - real) / real, signed
  bool inside = false;
  double seconds = -1;  // forecast wall time to target (-1: no record)
  // The same cut forecast from the other runs' complete curves (depth-regressed
  // weights in a depth family, else alike), when there are at least 2 others.
  bool has_family = false;
  FamilyForecast family;
  double family_error = 0;
  // p10, p90: the forecast corrected by the lowest and highest error the same
  // method makes on the other runs (each from the rest; 4 runs or more); p50: the forecast.
  Band family_band;
  bool family_inside = false;
  // The family forecast blended with the other runs' mean step (blend_weight
  // from the same hindcasts as the band; 4 runs or more that reach the target);
  // its band from the blend's errors on those hindcasts.
  bool has_blend = false;
  double blend_weight = 0, blend_steps = 0, blend_error = 0;
  Band blend_band;
  bool blend_inside = false;
  std::vector<double> family_curve_step, family_curve;  // its loss at the run's windows after the fit's start
};

struct RunStudy {
  std::string name;
  double depth = 0;
  Curve curve;
  LossFit fit;               // the whole run
  bool reaches = false;      // whether the run reaches the target accuracy
  double real_step = 0;      // first aggregated window at or above the target accuracy
  double target_loss = 0;    // the run's loss there (averaged over neighbouring windows)
  double steps_per_epoch = 0;
  double real_seconds = -1;  // -1: no record
  std::vector<CutForecast> cuts;
  // The baseline a forecast must beat: the mean step at which the other runs
  // reach the target, ignoring this run (0: fewer than 2 others reach it).
  double others_mean_step = 0;
  double others_mean_error = 0;
};

// A held-out run's forecast steps to the target loss, against the real run.
struct DepthPrediction {
  double steps = 0;        // infinity when the forecast curve never gets there
  double error = 0;        // (steps - real) / real, signed
  double curve_error = 0;  // mean |forecast - real| / real over the run's aggregated curve
};

// One run forecast from the other runs (leave one out), two ways: its loss
// model's coefficients regressed on depth, and its curve regressed on depth
// (the others' fitted log losses, step by step, with the same weights).
struct DepthForecast {
  std::string name;
  double depth = 0;
  double target_loss = 0;  // the mean of the other runs' target losses
  LossFit coefficients;    // b regressed; origin: the others' mean
  DepthPrediction from_coefficients, from_curves;
  std::vector<double> curve_step, curve;  // the curve regression's loss at the run's windows after the fits' start
};

struct Study {
  double target_acc = 0;
  std::vector<RunStudy> runs;
  std::vector<DepthForecast> ridge, rbf;  // leave-one-out, runs that reach the target
};

Study run_study(const std::vector<StudyRun>& runs, const StudyOptions& options);

// Median of |x|; NaN for none.
double median_abs(std::vector<double> values);

// The steps averaged into one window of `run`: options.window, or by default
// about 100 windows over its log.
int study_window(const StudyRun& run, const StudyOptions& options);

}  // namespace octet
