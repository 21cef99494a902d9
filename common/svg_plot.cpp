#include "common/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace octet {

namespace {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The two axes with their end labels and titles, and the end of the SVG.
std::string axes_and_end(double height, double left, double top, double plot_w, double plot_h,
                         const std::string& x_lo, const std::string& x_hi, const std::string& x_label,
                         const std::string& y_hi, const std::string& y_lo, const std::string& y_label) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"start\">%s</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n"
                "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">%s</text>\n"
                "</svg>\n",
                left, top + plot_h, left + plot_w, top + plot_h, left, top, left, top + plot_h, left,
                top + plot_h + 18, x_lo.c_str(), left + plot_w, top + plot_h + 18, x_hi.c_str(), left + plot_w / 2,
                height - 10, x_label.c_str(), left - 6, top + 10, y_hi.c_str(), left - 6, top + plot_h, y_lo.c_str(),
                top + plot_h / 2, top + plot_h / 2, y_label.c_str());
  return buf;
}

}  // namespace

std::string histogram_svg(const std::string& title, const std::vector<int64_t>& counts, double lo, double hi,
                          const std::string& x_label) {
  const double width = 640, height = 360, left = 70, right = 20, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const int64_t peak = std::max<int64_t>(1, *std::max_element(counts.begin(), counts.end()));
  const double bar_w = plot_w / static_cast<double>(counts.size());
  std::string svg;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
                width, height, width / 2, title.c_str());
  svg += buf;
  for (size_t b = 0; b < counts.size(); ++b) {
    const double bh = plot_h * static_cast<double>(counts[b]) / static_cast<double>(peak);
    std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#3b6ea5\"/>\n",
                  left + b * bar_w, top + plot_h - bh, std::max(bar_w - 0.5, 0.5), bh);
    svg += buf;
  }
  svg += axes_and_end(height, left, top, plot_w, plot_h, format_number(lo), format_number(hi), x_label,
                      std::to_string(peak), "0", "count");
  return svg;
}

std::string line_chart_svg(const std::string& title, const std::vector<SvgSeries>& series, const std::string& x_label,
                           const std::string& y_label) {
  // The legend's column is as wide as its longest name (about 7 px a character at 12 px).
  size_t longest = 0;
  for (const SvgSeries& s : series) longest = std::max(longest, s.name.size());
  const double plot_w = 460, height = 420, left = 70, top = 40, bottom = 50;
  const double right = std::max(190.0, 50 + 7.0 * static_cast<double>(longest)), width = left + plot_w + right;
  const double plot_h = height - top - bottom;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const SvgSeries& s : series)
    for (size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        x_lo = std::min(x_lo, s.x[i]), x_hi = std::max(x_hi, s.x[i]);
        y_lo = std::min(y_lo, s.y[i]), y_hi = std::max(y_hi, s.y[i]);
      }
  if (!(x_hi > x_lo)) x_lo = 0, x_hi = std::isfinite(x_hi) ? x_hi + 1 : 1;
  if (!(y_hi > y_lo)) y_lo = 0, y_hi = std::isfinite(y_hi) ? y_hi + 1 : 1;
  const auto px = [&](double x) { return left + plot_w * (x - x_lo) / (x_hi - x_lo); };
  const auto py = [&](double y) { return top + plot_h * (1 - (y - y_lo) / (y_hi - y_lo)); };
  std::string svg;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
                width, height, left + plot_w / 2, title.c_str());
  svg += buf;
  for (size_t n = 0; n < series.size(); ++n) {
    const SvgSeries& s = series[n];
    std::string path;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      if (s.points) {
        std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" fill=\"%s\"/>\n", px(s.x[i]),
                      py(s.y[i]), s.color.c_str());
        svg += buf;
      } else {
        std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", path.empty() ? "" : " ", px(s.x[i]), py(s.y[i]));
        path += buf;
      }
    }
    if (!path.empty())
      svg += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1.8\"" +
             (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + path + "\"/>\n";
    const double ly = top + 14 + 18 * static_cast<double>(n);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n"
                  "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                  width - right + 10, ly - 4, width - right + 34, ly - 4, s.color.c_str(), s.points ? "4" : "1.8",
                  s.dashed ? " stroke-dasharray=\"6 4\"" : "", width - right + 40, ly, s.name.c_str());
    svg += buf;
  }
  svg += axes_and_end(height, left, top, plot_w, plot_h, format_number(x_lo), format_number(x_hi), x_label,
                      format_number(y_hi), format_number(y_lo), y_label);
  return svg;
}

}  // namespace octet
