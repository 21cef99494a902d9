// octet forecast's fitting code: recovery of known loss-model and speed-model
// coefficients from noisy synthetic data, NNLS against a known solution, the
// step-log reader's refusals, and the depth regression on an exact trend.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "common/error.h"
#include "forecast/depth_regression.h"
#include "forecast/forecast.h"
#include "forecast/loss_model.h"
#include "forecast/nnls.h"
#include "forecast/speed_model.h"
#include "forecast/step_log.h"
#include "forecast/study.h"
#include "forecast/train_record.h"
#include "models/training_record.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

// A noisy synthetic loss curve with known b: per-step noise of `sigma` relative
// to the loss (as mini-batch losses scatter), aggregated in windows as octet does.
Curve synthetic_curve(const LossParams& b, int steps, double sigma, uint64_t seed, int window = 10) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, sigma);
  StepLog log;
  for (int k = 1; k <= steps; ++k) log.rows.push_back({1, k, b.at(k) * (1 + noise(rng)), 50});
  return aggregate(log, window);
}

void expect_within(double actual, double expected, double relative) {
  EXPECT_NEAR(actual, expected, relative * std::abs(expected)) << "expected " << expected;
}

TEST(ForecastNnls, MatchesAKnownSolutionWithAnActiveBound) {
  // Unconstrained least squares would give x = (1, -1, 2); with x >= 0 the
  // solution has x1 = 0 and (x0, x2) the least-squares fit of the rest, solved by hand.
  Eigen::MatrixXd a(4, 3);
  a << 1, 0, 0,  //
      0, 1, 0,   //
      0, 0, 1,   //
      1, 1, 1;
  const Eigen::VectorXd b = a * Eigen::Vector3d(1, -1, 2);
  const Eigen::VectorXd x = nnls(a, b);
  // Minimise (x0 - 1)^2 + 1 + (x2 - 2)^2 + (x0 + x2 - 2)^2: 2 x0 + x2 = 3 and
  // x0 + 2 x2 = 4, so x0 = 2/3, x2 = 5/3.
  EXPECT_NEAR(x(0), 2.0 / 3, 1e-12);
  EXPECT_EQ(x(1), 0.0);
  EXPECT_NEAR(x(2), 5.0 / 3, 1e-12);
}

TEST(ForecastNnls, ReturnsTheExactSolutionWhenItIsFeasible) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd a(20, 5);
  for (Eigen::Index i = 0; i < a.size(); ++i) a(i) = u(rng);
  const Eigen::VectorXd truth = (Eigen::VectorXd(5) << 0.5, 2, 0, 1.25, 3).finished();
  const Eigen::VectorXd x = nnls(a, a * truth);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(x(i), truth(i), 1e-9);
}

TEST(ForecastLossModel, RecoversKnownCoefficientsFromNoisyStepsWithinOnePercent) {
  const LossParams truths[] = {{0.002, 0.45, 0.30}, {0.0005, 0.8, 0.05}, {0.01, 1.0, 0.6}};
  LossFitOptions optimus;
  optimus.model = CurveModel::optimus;
  uint64_t seed = 11;
  for (const LossParams& truth : truths) {
    const Curve curve = synthetic_curve(truth, 20000, 0.02, seed++);
    optimus.weighting = Weighting::even;
    const LossFit fit = fit_loss(curve.step, curve.loss, 0, optimus);
    expect_within(fit.b.b0, truth.b0, 0.01);
    expect_within(fit.b.b1, truth.b1, 0.01);
    expect_within(fit.b.b2, truth.b2, 0.01);
    EXPECT_EQ(fit.b.a, 1.0);
    EXPECT_GT(fit.r2, 0.99);
    // The late weighting gives the first windows, where b1 shows most, little
    // weight: b2 and the curve stay within 1%.
    optimus.weighting = Weighting::late;
    const LossFit late = fit_loss(curve.step, curve.loss, 0, optimus);
    expect_within(late.b.b2, truth.b2, 0.01);
    for (double k : {500.0, 5000.0, 20000.0}) expect_within(late.b.at(k), truth.at(k), 0.01);
  }
}

TEST(ForecastLossModel, PowerModelRecoversAKnownExponent) {
  // Curves falling more slowly than 1/k (a < 1) and faster (a > 1).
  const LossParams truths[] = {{0.002, 0.45, 0.30, 0.5}, {0.001, 0.6, 0.1, 0.7}, {0.004, 1.0, 0.5, 1.5}};
  uint64_t seed = 31;
  for (const LossParams& truth : truths) {
    const Curve curve = synthetic_curve(truth, 20000, 0.01, seed++);
    const LossFit fit = fit_loss(curve.step, curve.loss);  // power, late weighting
    expect_within(fit.b.a, truth.a, 0.02);
    expect_within(fit.b.b2, truth.b2, 0.02);
    for (double k : {1000.0, 10000.0, 40000.0}) expect_within(fit.b.at(k), truth.at(k), 0.01);
  }
}

TEST(ForecastLossModel, PowerModelForecastsASlowCurveThatOptimusCallsNever) {
  // A curve with a = 0.5 seen to step 4000: its loss at step 12000 lies below
  // the asymptote a 1/k fit puts on the first part.
  const LossParams truth{0.002, 0.45, 0.30, 0.5};
  const Curve part = synthetic_curve(truth, 4000, 0.01, 41, 40);
  LossFitOptions optimus;
  optimus.model = CurveModel::optimus;
  optimus.weighting = Weighting::even;
  const double target = truth.at(12000);
  EXPECT_GT(fit_loss(part.step, part.loss, 0, optimus).b.b2, target);
  expect_within(fit_loss(part.step, part.loss).step_reaching(target), 12000, 0.10);
}

TEST(ForecastLossModel, RobustFitIgnoresOutlyingWindows) {
  const LossParams truth{0.002, 0.45, 0.30};
  Curve curve = synthetic_curve(truth, 20000, 0.01, 5);
  for (size_t i = 100; i < curve.size(); i += 300) curve.loss[i] += 1.5;  // loss spikes
  const LossFit robust = fit_loss(curve.step, curve.loss);
  LossFitOptions plain;
  plain.robust = false;
  const LossFit least_squares = fit_loss(curve.step, curve.loss, 0, plain);
  expect_within(robust.b.b2, truth.b2, 0.01);
  EXPECT_GT(std::abs(least_squares.b.b2 - truth.b2), std::abs(robust.b.b2 - truth.b2));
}

TEST(ForecastLossModel, FindsAScheduleChangeAndRefitsAfterIt) {
  // A milestone at step 3000: the loss drops onto a new curve counted from there.
  const LossParams before{0.002, 0.45, 0.8}, after{0.004, 2.0, 0.2};
  std::mt19937_64 rng(9);
  std::normal_distribution<double> noise(0, 0.01);
  StepLog log;
  for (int k = 1; k <= 6000; ++k)
    log.rows.push_back({1, k, (k <= 3000 ? before.at(k) : after.at(k - 3000)) * (1 + noise(rng)), 50});
  const Curve curve = aggregate(log, 50);
  const double change = detect_schedule_change(curve.step, curve.loss);
  EXPECT_NEAR(change, 3000, 50);
  const LossFit fit = fit_loss(curve.step, curve.loss, change);
  expect_within(fit.b.b2, after.b2, 0.02);
}

TEST(ForecastLossModel, RefusesTooFewPoints) {
  EXPECT_THROW(fit_loss({1, 2, 3}, {2.0, 1.5, 1.2}), Error);
}

TEST(ForecastSteps, BandFromHalfACurveContainsTheTrueStep) {
  const LossParams truth{0.002, 0.45, 0.30};
  StepLog half_log;
  std::mt19937_64 rng(21);
  std::normal_distribution<double> noise(0, 0.05);
  for (int k = 1; k <= 4000; ++k) half_log.rows.push_back({1, k, truth.at(k) * (1 + noise(rng)), 50});
  const Curve half = aggregate(half_log, 40);
  const double target = truth.at(7000);
  const StepsForecast f = forecast_steps_to_loss(half, fit_loss(half.step, half.loss), target, 100, 1);
  EXPECT_TRUE(f.band.contains(7000)) << f.band.p10 << " " << f.band.p90;
  EXPECT_LE(f.band.p10, f.band.p50);
  EXPECT_LE(f.band.p50, f.band.p90);
  expect_within(f.point, 7000, 0.10);
}

TEST(ForecastSteps, MonotoneFitPoolsAdjacentViolators) {
  // 1, 2 pool to 1.5; then 4 pools with them to 7/3, which stays below 3.
  const std::vector<double> fit = monotone_decreasing({3, 1, 2, 4});
  ASSERT_EQ(fit.size(), 4u);
  EXPECT_DOUBLE_EQ(fit[0], 3);
  for (size_t i = 1; i < 4; ++i) EXPECT_DOUBLE_EQ(fit[i], 7.0 / 3);
  const std::vector<double> partial = monotone_decreasing({5, 3, 1, 2, 0.5});
  const std::vector<double> expected = {5, 3, 1.5, 1.5, 0.5};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(partial[i], expected[i]);
}

TEST(ForecastSteps, CrossingOfANoisyCurveIsNotALuckyWindow) {
  // Accuracy a fixed function of a known curve, plus noise as large as the
  // curve's rise over a fifth of the run: the monotone fit's crossing stays
  // near the true step, and its loss near the true loss there.
  const LossParams truth{0.002, 0.45, 0.30, 0.6};
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 1.5);
  Curve curve;
  for (int k = 50; k <= 10000; k += 50) {
    curve.step.push_back(k);
    curve.loss.push_back(truth.at(k));
    curve.acc.push_back(100 - 40 * truth.at(k) + noise(rng));
  }
  // 100 - 40 l = 80 at l = 0.5, near step 7100.
  const double real = truth.steps_to(0.5);
  const Crossing crossing = first_reaching_accuracy(curve, 80);
  expect_within(crossing.step, real, 0.10);
  EXPECT_NEAR(crossing.loss, 0.5, 0.01);
}

TEST(ForecastSteps, ConvergenceRulesSolveTheModel) {
  LossFit fit;
  fit.b = {0.01, 1.0, 0.2};
  // Gap 1/(0.01 k + 1) is half its k = 0 value at k = 100.
  EXPECT_NEAR(steps_to_gap_fraction(fit, 0, 0.5), 100, 1e-9);
  const double k = steps_to_relative_change(fit, 0, 0.01, 100);
  EXPECT_LT(fit.at(k) - fit.at(k + 100), 0.01 * fit.at(k) + 1e-9);
  EXPECT_GT(fit.at(k - 1) - fit.at(k + 99), 0.01 * fit.at(k - 1));
}

TEST(ForecastStepLog, ParsesTheTrainersFormat) {
  const StepLog log = parse_step_log("epoch,step,loss,acc\n1,1,2.30,10.5\n1,2,2.1,12\n2,3,1.9,20\n", "x.csv");
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_EQ(log.rows[2].epoch, 2);
  EXPECT_EQ(log.rows[2].step, 3);
  EXPECT_DOUBLE_EQ(log.rows[1].loss, 2.1);
  const Curve c = aggregate(log, 2);
  ASSERT_EQ(c.size(), 2u);  // the last window of 1 row is half of 2: kept
  EXPECT_DOUBLE_EQ(c.step[0], 1.5);
  EXPECT_DOUBLE_EQ(c.loss[0], 2.2);
}

void expect_refused(const std::string& text, const std::string& message_part) {
  try {
    parse_step_log(text, "run.csv");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
  }
}

TEST(ForecastStepLog, RefusesMalformedLogsNamingFileAndLine) {
  expect_refused("", "run.csv: empty file");
  expect_refused("epoch,step,loss\n1,1,2\n", "run.csv:1: expected the step-log header");
  expect_refused("epoch,step,loss,acc\n", "run.csv: the step log has a header but no rows");
  expect_refused("epoch,step,loss,acc\n1,1,2.3,10\n1,2,2.2\n", "run.csv:3: expected 4 fields");
  expect_refused("epoch,step,loss,acc\n1,1,2.3,10\n1,2,abc,10\n", "run.csv:3: loss 'abc' is not a number");
  expect_refused("epoch,step,loss,acc\n1,1,nan,10\n", "run.csv:2: loss is nan, not a finite number");
  expect_refused("epoch,step,loss,acc\n1,1,inf,10\n", "run.csv:2: loss is inf");
  expect_refused("epoch,step,loss,acc\n1,2,2.3,10\n1,2,2.2,10\n", "run.csv:3: step 2 does not follow step 2");
  expect_refused("epoch,step,loss,acc\n1,1,-2.3,10\n", "run.csv:2: loss -2.3 is negative");
  expect_refused("epoch,step,loss,acc\n1,1,2.3,10,\n", "run.csv:2: expected 4 fields");
}

TEST(ForecastDepth, RidgeFollowsAnExactTrendAndLeaveOneOutRecoversIt) {
  // log b0, b1 and b2 linear in depth: ridge (tiny penalty) recovers a held-out depth.
  std::vector<RunCoefficients> runs;
  for (double d : {20.0, 32.0, 44.0, 56.0})
    runs.push_back({d, {std::exp(-6 - 0.01 * d), 0.5 + 0.005 * d, 0.1 + 0.002 * d}});
  const LossParams predicted = fit_depth_model(runs, DepthKernel::ridge, 1e-9).predict(110);
  expect_within(predicted.b0, std::exp(-6 - 1.1), 1e-4);
  expect_within(predicted.b1, 0.5 + 0.55, 1e-4);
  expect_within(predicted.b2, 0.1 + 0.22, 1e-4);
  const std::vector<LossParams> loo = leave_one_out(runs, DepthKernel::ridge, 1e-9);
  for (size_t i = 0; i < runs.size(); ++i) expect_within(loo[i].b2, runs[i].b.b2, 1e-4);
  // The rbf kernel passes through its training points with a small penalty.
  const DepthModel rbf = fit_depth_model(runs, DepthKernel::rbf, 1e-9);
  expect_within(rbf.predict(32).b2, runs[1].b.b2, 1e-4);
  // Both predict with weights on the runs' values (which regress whole curves):
  // the ridge weights reproduce the linear trend of any value, the rbf weights
  // sum to one (far from every run they return to the mean).
  const std::vector<double> ridge_w = fit_depth_model(runs, DepthKernel::ridge, 1e-9).weights(110);
  double trend = 0, sum = 0;
  for (size_t i = 0; i < runs.size(); ++i) trend += ridge_w[i] * (3 + 0.5 * runs[i].depth);
  EXPECT_NEAR(trend, 3 + 0.5 * 110, 1e-4);
  for (double w : rbf.weights(500)) sum += w;
  EXPECT_NEAR(sum, 1, 1e-9);
  // Optimus fits (a = 1) give a = 1 wherever they are regressed.
  EXPECT_DOUBLE_EQ(fit_depth_model(runs, DepthKernel::ridge).predict(110).a, 1.0);
}

TEST(ForecastSpeed, RecoversCoefficientsFromNoisyStepTimes) {
  const SpeedModel truth = paper_sync_speed_model();
  std::mt19937_64 rng(4);
  std::normal_distribution<double> noise(0, 0.0005);  // 0.05% timing noise
  std::vector<StepTimeSample> samples;
  for (double p : {1.0, 2.0, 4.0, 8.0})
    for (double w : {1.0, 2.0, 4.0, 8.0, 16.0}) samples.push_back({p, w, truth.step_time(p, w) * (1 + noise(rng))});
  const SpeedModel fit = fit_speed_model(samples, 128);
  for (size_t i : {0u, 1u, 2u}) expect_within(fit.t[i], truth.t[i], 0.05);
  for (double w : {3.0, 6.0}) expect_within(fit.speed(2, w), truth.speed(2, w), 0.01);
}

TEST(ForecastSpeed, ProbesWithPEqualToWGiveTheReducedModel) {
  // Optimus's public probes, and octet bench train scaling's: p always equal to
  // w. t0, t1 + t2 and t3 + t4 come back; p != w is refused.
  const SpeedModel truth = paper_sync_speed_model();
  std::vector<StepTimeSample> samples;
  for (double w : {1.0, 2.0, 3.0, 4.0, 6.0, 8.0}) samples.push_back({w, w, truth.step_time(w, w)});
  const SpeedModel fit = fit_speed_model(samples, 128);
  EXPECT_TRUE(fit.p_equals_w);
  EXPECT_NEAR(fit.t[0], truth.t[0], 1e-9);
  EXPECT_NEAR(fit.t[1], truth.t[1] + truth.t[2], 1e-9);
  EXPECT_NEAR(fit.t[3], truth.t[3] + truth.t[4], 1e-9);
  EXPECT_NEAR(fit.step_time(5, 5), truth.step_time(5, 5), 1e-9);
  EXPECT_THROW(fit.step_time(2, 4), Error);
  // Two distinct w cannot give three coefficients; mixed probes of rank < 5 are refused.
  EXPECT_THROW(fit_speed_model({{1, 1, 2}, {2, 2, 1.5}, {1, 1, 2.1}}, 128), Error);
  EXPECT_THROW(fit_speed_model({{1, 1, 2}, {2, 2, 1.5}, {4, 4, 1.2}, {2, 4, 1.4}, {8, 8, 1.1}}, 128), Error);
}

TEST(ForecastStudy, ForecastsCutsAndAHeldOutDepthOfSyntheticRuns) {
  // Four runs whose coefficients follow depth, with accuracy a fixed function
  // of the loss (as on one dataset): the study must find each run's target step
  // from half of it, and a depth from the others.
  std::vector<StudyRun> runs;
  std::mt19937_64 rng(17);
  std::normal_distribution<double> noise(0, 0.01);
  for (double depth : {20.0, 32.0, 44.0, 56.0}) {
    const LossParams b{0.004 * std::exp(-0.01 * depth), 0.5, 0.2 + 0.002 * depth};
    StudyRun run;
    run.name = "resnet" + std::to_string(static_cast<int>(depth));
    run.depth = depth;
    for (int k = 1; k <= 20000; ++k) {
      const double loss = b.at(k);
      run.log.rows.push_back({1 + k / 1000, k, loss * (1 + noise(rng)), 100 * (1 - loss / 2.5)});
    }
    runs.push_back(run);
  }
  StudyOptions options;
  options.target_acc = 100 * (1 - 0.6 / 2.5);  // loss 0.6
  options.cuts = {0.5};
  options.replicates = 50;
  options.window = 100;
  const Study study = run_study(runs, options);
  ASSERT_EQ(study.runs.size(), 4u);
  for (const RunStudy& r : study.runs) {
    ASSERT_TRUE(r.reaches) << r.name;
    EXPECT_LT(std::abs(r.cuts[0].error), 0.10) << r.name;
  }
  double real_sum = 0;
  for (const RunStudy& r : study.runs) real_sum += r.real_step;
  for (const RunStudy& r : study.runs) {
    EXPECT_NEAR(r.others_mean_step, (real_sum - r.real_step) / 3, 1e-6) << r.name;  // the baseline
    ASSERT_TRUE(r.cuts[0].has_family) << r.name;
    EXPECT_LT(std::abs(r.cuts[0].family_error), 0.05) << r.name;
    EXPECT_TRUE(r.cuts[0].family_band.contains(r.cuts[0].family.steps)) << r.name;
    // The runs' steps differ as their curves say, so the blend leans on the forecast.
    ASSERT_TRUE(r.cuts[0].has_blend) << r.name;
    EXPECT_GT(r.cuts[0].blend_weight, 0.9) << r.name;
    EXPECT_LT(std::abs(r.cuts[0].blend_error), 0.05) << r.name;
  }
  ASSERT_EQ(study.ridge.size(), 4u);
  for (const DepthPrediction& p : {study.ridge[1].from_coefficients, study.ridge[1].from_curves}) {
    EXPECT_LT(std::abs(p.error), 0.10);  // depth 32, between the others
    EXPECT_LT(p.curve_error, 0.02);
  }
}

TEST(ForecastFamily, RecoversTheStretchAndShiftOfARunAgainstItsFamily) {
  // The run is its family's curve 1.25 times as fast and e^0.1 times as high,
  // seen for its first 3000 steps: the rest of it, and where it reaches a loss
  // its part never showed, follow from the family.
  LossFit slow, fast;
  slow.b = {0.002, 0.4, 0.3, 0.6};
  fast.b = {0.0024, 0.4, 0.3, 0.6};
  const std::vector<FamilyMember> family = {{&slow, 0.5}, {&fast, 0.5}};
  const auto template_loss = [&](double step) { return std::sqrt(slow.at(step) * fast.at(step)); };
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.01);
  StepLog log;
  for (int k = 1; k <= 3000; ++k)
    log.rows.push_back({1, k, std::exp(0.1) * template_loss(1.25 * k) * (1 + noise(rng)), 50});
  const double target = std::exp(0.1) * template_loss(1.25 * 20000);
  const FamilyForecast f = forecast_from_family(aggregate(log, 30), 0, family, target, Weighting::late, 1e6);
  expect_within(f.scale, 1.25, 0.01);
  EXPECT_NEAR(f.shift, 0.1, 0.01);
  expect_within(f.steps, 20000, 0.02);
  expect_within(f.at(family, 20000), target, 0.005);
  // Never reached within the horizon: infinity, not the horizon.
  EXPECT_TRUE(std::isinf(forecast_from_family(aggregate(log, 30), 0, family, 0.01, Weighting::late, 1e6).steps));
  EXPECT_THROW(forecast_from_family(aggregate(log, 30), 0, {{&slow, 1.0}}, target, Weighting::late, 1e6), Error);
}

TEST(ForecastFamily, BlendTrustsTheForecastAsFarAsItsHindcastsEarn) {
  // Forecasts 20% and 10% off the mean step of 1000, in both directions.
  const std::vector<double> forecasts = {1200, 900, 1100, 800};
  const auto hindcasts_with = [&](double earned) {
    std::vector<Hindcast> h;
    for (double f : forecasts) h.push_back({f, 1000, 1000 * std::pow(f / 1000, earned)});
    return h;
  };
  EXPECT_NEAR(blend_weight(hindcasts_with(1)), 1, 1e-12);  // the real steps are the forecasts
  EXPECT_NEAR(blend_weight(hindcasts_with(0)), 0, 1e-12);  // the real steps are the mean
  EXPECT_NEAR(blend_weight(hindcasts_with(0.4)), 0.4, 1e-12);
  EXPECT_EQ(blend_weight(hindcasts_with(2)), 1);    // overshooting reality still trusts it only fully
  EXPECT_EQ(blend_weight(hindcasts_with(-1)), 0);   // wrong way round: the mean alone
  for (double e : blend_errors(hindcasts_with(0.4), 0.4)) EXPECT_NEAR(e, 0, 1e-12);
  EXPECT_NEAR(blended_steps(1210, 1000, 0.5), 1100, 1e-9);
  // A forecast that never reached the target on a like run: the mean alone.
  std::vector<Hindcast> failed = hindcasts_with(1);
  failed.push_back({std::numeric_limits<double>::infinity(), 1000, 1100});
  EXPECT_EQ(blend_weight(failed), 0);
  EXPECT_EQ(blended_steps(std::numeric_limits<double>::infinity(), 1000, 0), 1000);
  EXPECT_TRUE(std::isinf(blended_steps(std::numeric_limits<double>::infinity(), 1000, 0.5)));
  EXPECT_EQ(blend_weight({}), 1);
  EXPECT_THROW(blend_weight({{1000, 0, 900}}), Error);
}

TEST(ForecastTrainRecord, ReadsEpochsAndRefusesOtherJson) {
  TempDir dir;
  const std::string good = dir.path() + "/run.json", bad = dir.path() + "/other.json";
  TrainingRecord written;
  written.options.model = "resnet20", written.options.dataset = "cifar10", written.options.device = "cpu";
  written.options.warmup_epochs = 0.5;
  EpochStats first, second;
  first.epoch = 1, first.steps = 391, first.epoch_seconds = 78.2, first.train_loss = 1.6, first.train_top1 = 39;
  second.epoch = 2, second.steps = 391, second.epoch_seconds = 80.0, second.train_loss = 1.2, second.train_top1 = 55;
  written.results.epochs = {first, second};
  write_text_output(good, training_record_json(written));
  write_text_output(bad, R"({"epochs": []})");
  const TrainRecord record = read_train_record(good);
  EXPECT_DOUBLE_EQ(record.seconds_per_step(391), 0.2);
  EXPECT_DOUBLE_EQ(record.seconds_per_step(782), 158.2 / 782);
  EXPECT_DOUBLE_EQ(record.warmup_steps(), 0.5 * 391);
  const StepLog log = epoch_log(record);
  ASSERT_EQ(log.rows.size(), 2u);
  EXPECT_EQ(log.rows[1].step, 782);
  EXPECT_DOUBLE_EQ(log.rows[1].loss, 1.2);
  const std::string message = error_of([&] { read_train_record(bad); });
  EXPECT_NE(message.find(bad + ": not a training record written by octet train"), std::string::npos) << message;
  // A record whose epoch has no time is no finished epoch.
  written.results.epochs[1].epoch_seconds = 0;
  write_text_output(good, training_record_json(written));
  EXPECT_NE(error_of([&] { read_train_record(good); }).find("epoch 2 has no steps or no time"), std::string::npos);
}

}  // namespace
}  // namespace octet
