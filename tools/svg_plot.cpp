#include "tools/svg_plot.h"

#include <algorithm>
#include <cstdio>

namespace octet {

std::string histogram_svg(const std::string& title, const Histogram& h, const std::string& x_label) {
  const double width = 640, height = 360, left = 70, right = 20, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const int64_t peak = std::max<int64_t>(1, *std::max_element(h.counts.begin(), h.counts.end()));
  const double bar_w = plot_w / static_cast<double>(h.counts.size());
  std::string svg;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
                width, height, width / 2, title.c_str());
  svg += buf;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    const double bh = plot_h * static_cast<double>(h.counts[b]) / static_cast<double>(peak);
    std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#3b6ea5\"/>\n",
                  left + b * bar_w, top + plot_h - bh, std::max(bar_w - 0.5, 0.5), bh);
    svg += buf;
  }
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"start\">%.4g</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.4g</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%lld</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n"
                "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">count</text>\n"
                "</svg>\n",
                left, top + plot_h, left + plot_w, top + plot_h, left, top, left, top + plot_h, left,
                top + plot_h + 18, h.lo, left + plot_w, top + plot_h + 18, h.hi, left + plot_w / 2, height - 10,
                x_label.c_str(), left - 6, top + 10, static_cast<long long>(peak), left - 6, top + plot_h,
                top + plot_h / 2, top + plot_h / 2);
  svg += buf;
  return svg;
}

}  // namespace octet
