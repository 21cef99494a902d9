// `octet bench train`'s loss plot: one legend entry per distinct line (sgd at
// lr 0.1 is both the lab's lr and its usual one: one run, one line), styles a
// reader can tell apart, per-step curves where the runs logged their steps,
// and the diverged run marked off the scale. And the step-log reader behind it.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "bench/step_losses.h"
#include "bench/train_summary.h"
#include "tests/bench/optimizer_runs.h"

namespace octet {
namespace {

TEST(BenchTrainSummary, OptimizerPlotHasOneDistinctEntryPerLine) {
  const std::vector<RunRecord> runs = optimizer_runs(true);
  ASSERT_EQ(runs.size(), 10u);
  const ResultTable t = summarize_scenario(optimizers_options(), runs, 6400);
  EXPECT_EQ(t.rows.size(), 10u);  // the table keeps both lr settings' rows
  std::set<std::string> names;
  std::set<std::pair<std::string, bool>> styles;
  for (const SvgSeries& s : t.plot) {
    EXPECT_TRUE(names.insert(s.name).second) << "twice in the legend: " << s.name;
    EXPECT_TRUE(styles.insert({s.color, s.dashed}).second) << s.name << " looks like another line";
  }
  EXPECT_EQ(t.plot.size(), 8u);  // sgd and nesterov at lr 0.1 once each
  int diverged_notes = 0;
  for (const std::string& note : t.notes) diverged_notes += note.find("diverged") != std::string::npos;
  EXPECT_EQ(diverged_notes, 1);
}

TEST(BenchTrainSummary, LossPlotDrawsStepsWhereTheRunsLoggedThem) {
  const ResultTable steps = summarize_scenario(optimizers_options(), optimizer_runs(true), 6400);
  const ResultTable epochs = summarize_scenario(optimizers_options(), optimizer_runs(false), 6400);
  EXPECT_EQ(steps.plot[0].x.size(), 100u);  // 2 epochs of 50 steps, windows of one step
  EXPECT_DOUBLE_EQ(steps.plot[0].x[0], 0.02);
  EXPECT_EQ(epochs.plot[0].x, (std::vector<double>{1, 2}));
}

TEST(BenchTrainSummary, DivergedRunIsMarkedOffTheScaleOfTheOthers) {
  const std::string svg = table_svg(summarize_scenario(optimizers_options(), optimizer_runs(true), 6400));
  EXPECT_NE(svg.find("class=\"off-scale\""), std::string::npos);
  EXPECT_NE(svg.find("adam lr 0.1 (up to 8"), std::string::npos) << svg;
}

TEST(StepLosses, ParsesTheTrainersLogKeepingNaN) {
  const nlohmann::json training = {{"epochs", {{{"steps", 4}}, {{"steps", 2}}}}};
  const std::vector<StepLoss> s =
      parse_step_losses("epoch,step,loss,acc\n1,1,2.3,10\n1,4,2.1,12\n2,5,nan,0\n2,6,-nan,0\n", training, "log.csv");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_DOUBLE_EQ(s[0].epochs, 0.25);
  EXPECT_DOUBLE_EQ(s[1].epochs, 1.0);
  EXPECT_DOUBLE_EQ(s[2].epochs, 1.5);
  EXPECT_DOUBLE_EQ(s[1].loss, 2.1);
  EXPECT_TRUE(std::isnan(s[2].loss) && std::isnan(s[3].loss));
  EXPECT_THROW(parse_step_losses("step,loss\n1,2\n", training, "log.csv"), std::exception);
  EXPECT_THROW(parse_step_losses("epoch,step,loss,acc\n3,7,2.0,1\n", training, "log.csv"), std::exception);
  EXPECT_THROW(parse_step_losses("epoch,step,loss,acc\n1,x,2.0,1\n", training, "log.csv"), std::exception);
}

TEST(StepLosses, WindowMeansAverageConsecutiveSteps) {
  std::vector<StepLoss> steps;
  for (int i = 1; i <= 10; ++i) steps.push_back({0.1 * i, static_cast<double>(i)});
  const std::vector<StepLoss> means = window_means(steps, 5);
  ASSERT_EQ(means.size(), 5u);
  EXPECT_DOUBLE_EQ(means[0].loss, 1.5);
  EXPECT_DOUBLE_EQ(means[4].epochs, 0.95);
  steps[3].loss = NAN;
  EXPECT_TRUE(std::isnan(window_means(steps, 5)[1].loss));
}

}  // namespace
}  // namespace octet
