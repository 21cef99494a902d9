#include "common/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/svg_axis.h"

namespace octet {

namespace {

// The plot area inside the SVG, in pixels.
struct Frame {
  double width, height, left, top, plot_w, plot_h;
  double x(const ChartAxis& a, double v) const { return left + plot_w * a.fraction(v); }
  double y(const ChartAxis& a, double v) const { return top + plot_h * (1 - a.fraction(v)); }
};

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

std::string svg_start(const Frame& f, const std::string& title) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
                f.width, f.height, f.left + f.plot_w / 2, escaped(title).c_str());
  return buf;
}

// Light gridlines and labels at every tick of both axes (under the data).
std::string grid(const Frame& f, const ChartAxis& x, const ChartAxis& y) {
  std::string svg;
  char buf[512];
  for (double t : x.ticks) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e4e4e4\"/>\n"
                  "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" class=\"x-tick\">%s</text>\n",
                  f.x(x, t), f.top, f.x(x, t), f.top + f.plot_h, f.x(x, t), f.top + f.plot_h + 16, x.label(t).c_str());
    svg += buf;
  }
  for (double t : y.ticks) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n"
                  "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" class=\"y-tick\">%s</text>\n",
                  f.left, f.y(y, t), f.left + f.plot_w, f.y(y, t), f.left - 6, f.y(y, t) + 4, y.label(t).c_str());
    svg += buf;
  }
  return svg;
}

// The two axis lines, their titles (the value axis saying when it is log) and the end of the SVG.
std::string axes_and_end(const Frame& f, const std::string& x_label, const ChartAxis& y, const std::string& y_label) {
  char buf[1024];
  const std::string y_title = escaped(y_label) + (y.log ? " (log scale)" : "");
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
                "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">%s</text>\n"
                "</svg>\n",
                f.left, f.top + f.plot_h, f.left + f.plot_w, f.top + f.plot_h, f.left, f.top, f.left,
                f.top + f.plot_h, f.left + f.plot_w / 2, f.height - 10, escaped(x_label).c_str(),
                f.top + f.plot_h / 2, f.top + f.plot_h / 2, y_title.c_str());
  return buf;
}

bool drawable(const SvgSeries& s, size_t i) { return std::isfinite(s.x[i]) && std::isfinite(s.y[i]); }

// Where a series leaves the shown range: a triangle in its colour on the edge
// at its first point beyond it, and "NAME (up to V)" for the note over the plot.
std::string off_scale_marks(const Frame& f, const ChartAxis& x, const ChartAxis& y, const SvgSeries& s,
                            std::vector<std::string>& notes) {
  std::string svg;
  char buf[256];
  for (const bool high : {true, false}) {
    double extreme = high ? y.hi : y.lo, first_x = NAN;
    for (size_t i = 0; i < s.x.size(); ++i)
      if (drawable(s, i) && y.side(s.y[i]) == (high ? 1 : -1)) {
        if (std::isnan(first_x)) first_x = s.x[i];
        extreme = high ? std::max(extreme, s.y[i]) : std::min(extreme, s.y[i]);
      }
    if (std::isnan(first_x)) continue;
    const double cx = f.x(x, first_x), edge = high ? f.top : f.top + f.plot_h, tip = high ? -7 : 7;
    std::snprintf(buf, sizeof buf, "<path class=\"off-scale\" d=\"M%.1f,%.1f l-6,%.0f h12 z\" fill=\"%s\"/>\n", cx,
                  edge + tip, -tip, s.color.c_str());
    svg += buf;
    std::snprintf(buf, sizeof buf, "%s (%s to %.4g)", s.name.c_str(), high ? "up" : "down", extreme);
    notes.push_back(buf);
  }
  return svg;
}

std::string legend_entry(const Frame& f, const SvgSeries& s, size_t n) {
  const double lx = f.left + f.plot_w + 20, ly = f.top + 14 + 18 * static_cast<double>(n);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n"
                "<text x=\"%.0f\" y=\"%.0f\" class=\"legend\">%s</text>\n",
                lx, ly - 4, lx + 24, ly - 4, s.color.c_str(), s.points ? "4" : "1.8",
                s.dashed ? " stroke-dasharray=\"6 4\"" : "", lx + 30, ly, escaped(s.name).c_str());
  return buf;
}

}  // namespace

std::string histogram_svg(const std::string& title, const std::vector<int64_t>& counts, double lo, double hi,
                          const std::string& x_label) {
  const Frame f{640, 360, 70, 40, 550, 270};
  // Counts of a few nonzero bins against a peak many times higher: log, the empty bins left out.
  int64_t peak = 1, least = 0;
  for (int64_t c : counts)
    if (c > 0) peak = std::max(peak, c), least = least > 0 ? std::min(least, c) : c;
  const ChartAxis y = least > 0 && peak > 10 * least ? log_axis(static_cast<double>(least), static_cast<double>(peak))
                                                     : linear_axis(0, static_cast<double>(peak), true);
  const ChartAxis x = linear_axis(lo, hi, false);
  const double bar_w = f.plot_w / static_cast<double>(counts.size());
  std::string svg = svg_start(f, title) + grid(f, x, y);
  char buf[512];
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] <= 0) continue;
    // At least a pixel: the least count sits on the bottom of a log axis.
    const double bh = std::max(1.0, f.top + f.plot_h - f.y(y, static_cast<double>(counts[b])));
    std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#3b6ea5\"/>\n",
                  f.left + b * bar_w, f.top + f.plot_h - bh, std::max(bar_w - 0.5, 0.5), bh);
    svg += buf;
  }
  return svg + axes_and_end(f, x_label, y, "count");
}

std::string line_chart_svg(const std::string& title, const std::vector<SvgSeries>& series, const std::string& x_label,
                           const std::string& y_label) {
  // The legend's column is as wide as its longest name (about 7 px a character at 12 px).
  size_t longest = 0;
  for (const SvgSeries& s : series) longest = std::max(longest, s.name.size());
  const double right = std::max(190.0, 50 + 7.0 * static_cast<double>(longest));
  const double rows = std::max(18.0 * static_cast<double>(series.size()) + 20, 330.0);
  const Frame f{70 + 460 + right, 56 + rows + 50, 70, 56, 460, rows};
  std::vector<double> xs, ys;
  for (const SvgSeries& s : series)
    for (size_t i = 0; i < s.x.size(); ++i)
      if (drawable(s, i)) xs.push_back(s.x[i]), ys.push_back(s.y[i]);
  const ChartAxis x = xs.empty() ? linear_axis(0, 1, true)
                                 : linear_axis(*std::min_element(xs.begin(), xs.end()),
                                               *std::max_element(xs.begin(), xs.end()), true);
  const ChartAxis y = value_axis(ys, true);
  char buf[512];
  std::snprintf(buf, sizeof buf, "<clipPath id=\"plot-area\"><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"/></clipPath>\n",
                f.left, f.top, f.plot_w, f.plot_h);
  std::string svg = svg_start(f, title) + buf + grid(f, x, y);
  std::vector<std::string> off_scale;
  for (size_t n = 0; n < series.size(); ++n) {
    const SvgSeries& s = series[n];
    std::string path;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!drawable(s, i)) continue;
      if (s.points) {
        if (y.side(s.y[i]) != 0) continue;
        std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" fill=\"%s\"/>\n", f.x(x, s.x[i]),
                      f.y(y, s.y[i]), s.color.c_str());
        svg += buf;
      } else {
        std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", path.empty() ? "" : " ", f.x(x, s.x[i]), f.y(y, s.y[i]));
        path += buf;
      }
    }
    if (!path.empty())
      svg += "<polyline fill=\"none\" clip-path=\"url(#plot-area)\" stroke=\"" + s.color + "\" stroke-width=\"1.8\"" +
             (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + path + "\"/>\n";
    svg += off_scale_marks(f, x, y, s, off_scale) + legend_entry(f, s, n);
  }
  if (!off_scale.empty()) {
    std::string note = "off the scale (triangles):";
    for (size_t i = 0; i < off_scale.size(); ++i) note += (i ? "; " : " ") + off_scale[i];
    svg += "<text x=\"" + std::to_string(static_cast<int>(f.left)) + "\" y=\"44\" font-size=\"11\" fill=\"#555\" " +
           "class=\"off-scale-note\">" + escaped(note) + "</text>\n";
  }
  return svg + axes_and_end(f, x_label, y, y_label);
}

}  // namespace octet
