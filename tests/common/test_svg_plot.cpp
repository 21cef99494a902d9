// The SVG charts' axes: round-number ticks, a log axis where the values span
// more than a decade, outliers left off the scale and marked, and the SVG text
// carrying them (tick labels, the note naming an off-scale line).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "common/svg_axis.h"
#include "common/svg_plot.h"

namespace octet {
namespace {

// Whether `v` is 1, 2 or 5 times a power of ten.
bool one_two_five(double v) {
  const double mantissa = v / std::pow(10.0, std::floor(std::log10(v) + 1e-9));
  return std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9;
}

// Every tick a multiple of one 1-2-5 step (linear) or a 1-2-5 value (log).
void expect_round(const ChartAxis& a) {
  ASSERT_GE(a.ticks.size(), 2u);
  if (a.log) {
    for (double t : a.ticks) EXPECT_TRUE(one_two_five(t)) << t;
    return;
  }
  const double step = a.ticks[1] - a.ticks[0];
  EXPECT_TRUE(one_two_five(step)) << step;
  for (double t : a.ticks) EXPECT_NEAR(t / step, std::round(t / step), 1e-6) << t;
}

// The labels of one axis's ticks in an SVG (class x-tick or y-tick).
std::vector<std::string> tick_labels(const std::string& svg, const std::string& axis) {
  std::vector<std::string> labels;
  const std::regex tick("class=\"" + axis + "-tick\">([^<]*)<");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    labels.push_back((*it)[1]);
  return labels;
}

TEST(SvgAxis, LinearTicksAreRoundStepsAroundTheValues) {
  const ChartAxis a = linear_axis(1.93, 2.31, true);
  EXPECT_FALSE(a.log);
  expect_round(a);
  EXPECT_LE(a.lo, 1.93);
  EXPECT_GE(a.hi, 2.31);
  EXPECT_GE(a.ticks.size(), 4u);
  EXPECT_LE(a.ticks.size(), 11u);
  EXPECT_EQ(a.label(a.ticks[0]), "1.9");
  const ChartAxis epochs = linear_axis(1, 5, true);
  EXPECT_EQ(epochs.ticks, (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(epochs.label(3), "3");
}

TEST(SvgAxis, LogWhereTheValuesSpanMoreThanADecade) {
  EXPECT_TRUE(value_axis({0.02, 0.5, 3, 30}, false).log);
  EXPECT_FALSE(value_axis({2, 5, 9, 19}, false).log);  // under a decade
  EXPECT_FALSE(value_axis({-1, 0.5, 30}, false).log);  // not all positive
  const ChartAxis wide = value_axis({0.002, 30}, false);
  expect_round(wide);
  EXPECT_EQ(wide.ticks, (std::vector<double>{0.001, 0.01, 0.1, 1, 10, 100}));  // over three decades: decades only
}

TEST(SvgAxis, LogOverFewDecadesHasItsTwosAndFives) {
  const ChartAxis a = log_axis(1.9, 79.8);
  expect_round(a);
  EXPECT_EQ(a.ticks, (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_EQ(a.label(0.05), "0.05");
}

TEST(SvgAxis, AnOutlierThatWouldSqueezeTheRestIsClipped) {
  std::vector<double> losses;
  for (int i = 0; i < 90; ++i) losses.push_back(1.9 + 0.4 * i / 89.0);
  for (double v : {2.4, 5.0, 12.0, 30.0, 79.8}) losses.push_back(v);
  const ChartAxis a = value_axis(losses, true);
  EXPECT_TRUE(a.clipped_high);
  EXPECT_FALSE(a.clipped_low);
  EXPECT_LT(a.hi, 3);  // the other lines fill the plot
  EXPECT_EQ(a.side(1.9), 0);  // the lowest value on the axis
  const ChartAxis unclipped = value_axis(losses, false);
  EXPECT_FALSE(unclipped.clipped_high);
  EXPECT_GE(unclipped.hi, 79.8);
}

TEST(SvgAxis, ASmoothCurveOverDecadesKeepsAllItsPoints) {
  std::vector<double> losses;
  for (int step = 1; step <= 200; ++step) losses.push_back(2.3 * std::pow(step, -0.7));
  const ChartAxis a = value_axis(losses, true);
  EXPECT_FALSE(a.clipped_high || a.clipped_low);
  EXPECT_TRUE(a.log);
}

// Nine lines between 1.9 and 2.3 and one that diverges to 79.8: the bench
// train plot of issue 38.
std::vector<SvgSeries> nine_and_a_diverged_run() {
  std::vector<SvgSeries> series;
  for (int n = 0; n < 10; ++n) {
    SvgSeries s;
    s.name = "run " + std::to_string(n);
    for (int e = 1; e <= 5; ++e) {
      s.x.push_back(e);
      s.y.push_back(n == 3 ? 2.3 * std::pow(3.0, e - 1) : 2.3 - 0.08 * e - 0.01 * n);
    }
    series.push_back(s);
  }
  return series;
}

TEST(SvgPlot, LineChartMarksTheDivergedRunAndKeepsTheOthersReadable) {
  const std::string svg = line_chart_svg("losses", nine_and_a_diverged_run(), "epoch", "training loss");
  EXPECT_NE(svg.find("class=\"off-scale\""), std::string::npos);
  EXPECT_NE(svg.find("run 3 (up to 186.3)"), std::string::npos) << svg;
  const std::vector<std::string> y = tick_labels(svg, "y");
  ASSERT_GE(y.size(), 3u);
  EXPECT_LT(std::stod(y.back()), 3);
  EXPECT_EQ(tick_labels(svg, "x"), (std::vector<std::string>{"1", "2", "3", "4", "5"}));
}

TEST(SvgPlot, LineChartTicksAreRoundAndTheLogAxisSaysSo) {
  SvgSeries s;
  s.name = "seconds";
  s.x = {0, 1, 2, 4, 8};
  s.y = {0.013, 0.4, 3.1, 9.0, 31.0};
  const std::string svg = line_chart_svg("time", {s}, "workers", "seconds");
  EXPECT_NE(svg.find("seconds (log scale)"), std::string::npos);
  EXPECT_EQ(tick_labels(svg, "y"), (std::vector<std::string>{"0.01", "0.1", "1", "10", "100"}));
  EXPECT_EQ(tick_labels(svg, "x"), (std::vector<std::string>{"0", "2", "4", "6", "8"}));
  EXPECT_EQ(svg.find("off-scale"), std::string::npos);
}

TEST(SvgPlot, HistogramCountsOverDecadesGetALogAxis) {
  const std::vector<int64_t> counts = {1, 4, 30, 800, 12000, 900, 20, 0, 2};
  const std::string svg = histogram_svg("weights", counts, -0.5, 0.4, "weight value");
  EXPECT_NE(svg.find("count (log scale)"), std::string::npos);
  EXPECT_EQ(tick_labels(svg, "y"), (std::vector<std::string>{"1", "10", "100", "1000", "10000", "100000"}));
  EXPECT_EQ(tick_labels(svg, "x"), (std::vector<std::string>{"-0.4", "-0.2", "0.0", "0.2", "0.4"}));
  const std::string flat = histogram_svg("flat", {5, 9, 7, 12}, 0, 1, "value");
  EXPECT_EQ(flat.find("log scale"), std::string::npos);
  EXPECT_EQ(tick_labels(flat, "y").front(), "0");
}

}  // namespace
}  // namespace octet
