// Small standalone SVG charts (no plotting library needed): a histogram's
// bars, and lines on shared axes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

// Bars of `counts`, the bins splitting [lo, hi] evenly; the count axis is log
// where the nonzero counts span more than a decade.
std::string histogram_svg(const std::string& title, const std::vector<int64_t>& counts, double lo, double hi,
                          const std::string& x_label);

// One line of a line chart; `points` draws markers only (measured data).
struct SvgSeries {
  std::string name;
  std::vector<double> x, y;
  std::string color = "#3b6ea5";
  bool dashed = false;
  bool points = false;
};

// Lines on shared axes with round-number ticks and gridlines, and a legend
// (one entry per series: give them distinct names). The value axis is log
// where the values span more than a decade; outliers that would squeeze the
// other lines are left off the scale, marked by a triangle on the edge and
// named in a note. Non-finite points are skipped.
std::string line_chart_svg(const std::string& title, const std::vector<SvgSeries>& series, const std::string& x_label,
                           const std::string& y_label);

}  // namespace octet
