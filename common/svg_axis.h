// The value axes of the SVG charts (common/svg_plot.h): a range a reader can
// compare lines on, linear or log, and round-number ticks for it.
#pragma once

#include <string>
#include <vector>

namespace octet {

struct ChartAxis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;  // ascending, within [lo, hi]
  bool clipped_low = false, clipped_high = false;  // values lie beyond lo / hi

  // Where `v` falls along the axis: 0 at lo, 1 at hi (beyond them when clipped).
  double fraction(double v) const;
  // -1 below lo, 1 above hi, 0 on the axis (its round ends may miss a value by a rounding error).
  int side(double v) const;
  std::string label(double tick) const;
};

// Ticks every 1, 2 or 5 times a power of ten, about five of them; with
// `round_ends` the range widens to the ticks around [lo, hi].
ChartAxis linear_axis(double lo, double hi, bool round_ends);

// Ticks at the 1-2-5 values of [lo, hi] (lo > 0) where it spans at most three
// decades, else at its decades; the range widens to the ticks around it.
ChartAxis log_axis(double lo, double hi);

// The axis of `values` (non-finite ones ignored). With `clip_outliers`, values
// beyond Tukey's far fences (3 interquartile ranges; on log values where all
// are positive) are left off when they would take over four fifths of the
// axis. Log where the shown values are positive and span more than a decade.
ChartAxis value_axis(const std::vector<double>& values, bool clip_outliers);

}  // namespace octet
