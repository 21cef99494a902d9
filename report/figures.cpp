#include "report/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <set>
#include <string>

#include "common/svg_axis.h"

namespace octet {

namespace {
// Appends printf-formatted text.
void add(std::string& out, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  out += buf;
}

struct Frame {
  double width, height, left, right, top, bottom;
  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
};

void open_svg(std::string& out, const Frame& f, const std::string& label) {
  add(out,
      "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"%s\">\n",
      f.width, f.height, f.width, f.height, html_escape(label).c_str());
}

void axes(std::string& out, const Frame& f) {
  add(out, "<path d=\"M%.1f %.1f V%.1f H%.1f\" class=\"axis\"/>\n", f.left, f.top, f.top + f.plot_h(),
      f.left + f.plot_w());
}
}  // namespace

const char* method_colour(const std::string& method) {
  if (method == "max") return "#d62728";
  if (method == "sigma3") return "#9467bd";
  if (method == "percentile") return "#2ca02c";
  if (method == "entropy") return "#1f77b4";
  if (method == "mse") return "#ff7f0e";
  return "#555555";
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string activation_histogram_svg(const ActivationView& a) {
  const Frame f{560, 250, 52, 16, 30, 36};
  constexpr int kShownBins = 140;
  double x_max = a.chosen_amax;
  for (const MethodChoice& m : a.methods) x_max = std::max(x_max, m.amax);
  x_max = x_max > 0 ? x_max * 1.04 : 1.0;

  // Merge the recorded bins into the shown ones; values past x_max fall in the last.
  std::vector<double> shown(kShownBins, 0.0);
  const double width = a.range / static_cast<double>(a.abs_histogram.size());
  for (size_t b = 0; b < a.abs_histogram.size(); ++b) {
    const double centre = (static_cast<double>(b) + 0.5) * width;
    const int k = std::min(kShownBins - 1, static_cast<int>(centre / x_max * kShownBins));
    shown[k] += static_cast<double>(a.abs_histogram[b]);
  }
  const double peak = std::log10(1.0 + *std::max_element(shown.begin(), shown.end()));
  auto x_of = [&](double v) { return f.left + f.plot_w() * std::min(v, x_max) / x_max; };

  std::string out;
  open_svg(out, f, "histogram of |x| with every method's amax");
  // Shaded: what the chosen amax clips.
  add(out,
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"clipped\"><title>clipped by the chosen "
      "amax</title></rect>\n",
      x_of(a.chosen_amax), f.top, std::max(0.0, f.left + f.plot_w() - x_of(a.chosen_amax)), f.plot_h());
  const size_t under_the_bars = out.size();  // the gridlines go here, below the bars
  const double bar_w = f.plot_w() / kShownBins;
  out += "<g class=\"bars\">";
  for (int k = 0; k < kShownBins; ++k) {
    if (shown[k] == 0) continue;
    const double h = peak > 0 ? f.plot_h() * std::log10(1.0 + shown[k]) / peak : 0;
    add(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>", f.left + k * bar_w, f.top + f.plot_h() - h,
        std::max(bar_w - 0.4, 0.6), h);
  }
  out += "</g>\n";
  axes(out, f);
  std::string grid;
  const ChartAxis x_axis = linear_axis(0, x_max, false);
  for (double t : x_axis.ticks) {
    const double x = f.left + f.plot_w() * x_axis.fraction(t);
    add(grid, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", x, x, f.top, f.top + f.plot_h());
    add(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", x,
        f.top + f.plot_h() + 14, x_axis.label(t).c_str());
  }
  add(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">|x|</text>\n", f.left + f.plot_w() / 2,
      f.height - 4);
  // Counts on a log scale (of 1 + count): a gridline at each decade.
  for (int e = 0; e <= static_cast<int>(peak); ++e) {
    const double y = f.top + f.plot_h() - f.plot_h() * std::log10(1.0 + std::pow(10.0, e)) / std::max(peak, 1e-9);
    add(grid, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", f.left, f.left + f.plot_w(), y, y);
    add(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n", f.left - 4, y + 4,
        e <= 4 ? std::to_string(static_cast<long>(std::pow(10.0, e) + 0.5)).c_str() : ("1e" + std::to_string(e)).c_str());
  }
  out.insert(under_the_bars, grid + "\n");

  // Every method's amax, then the chosen one on top.
  for (const MethodChoice& m : a.methods)
    add(out,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" class=\"amax\"><title>%s: amax "
        "%.4g</title></line>\n",
        x_of(m.amax), f.top, x_of(m.amax), f.top + f.plot_h(), method_colour(m.method), m.method.c_str(), m.amax);
  const double cx = x_of(a.chosen_amax);
  const bool label_left = cx > f.left + 0.6 * f.plot_w();
  add(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" class=\"chosen\"/>\n", cx, f.top - 6,
      cx, f.top + f.plot_h(), method_colour(a.chosen_method));
  add(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"chosen-label\" text-anchor=\"%s\">chosen: %s, amax %.4g</text>\n",
      label_left ? cx - 5 : cx + 5, f.top - 12, label_left ? "end" : "start", html_escape(a.chosen_method).c_str(),
      a.chosen_amax);
  out += "</svg>\n";
  return out;
}

std::string channel_spread_svg(const WeightView& w) {
  const Frame f{560, 170, 52, 16, 14, 30};
  std::vector<size_t> order(w.channel_amax.size());
  for (size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return w.channel_amax[a] > w.channel_amax[b]; });
  double top = 0;
  for (size_t c = 0; c < order.size(); ++c) top = std::max({top, double(w.channel_amax[c]), double(w.used_amax[c])});
  top = top > 0 ? top * 1.05 : 1.0;
  auto y_of = [&](double v) { return f.top + f.plot_h() * (1.0 - v / top); };

  std::string out;
  open_svg(out, f, "max |w| per output channel");
  const ChartAxis y_axis = linear_axis(0, top, false);
  for (double t : y_axis.ticks)
    add(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", f.left, f.left + f.plot_w(),
        y_of(t), y_of(t));
  out += "\n";
  const double bar_w = f.plot_w() / static_cast<double>(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t c = order[k];
    const double x = f.left + k * bar_w;
    add(out,
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" class=\"channel\"><title>channel %zu: max|w| %.4g, "
        "quantized with amax %.4g</title></rect>",
        x, y_of(w.channel_amax[c]), std::max(bar_w - 0.3, 0.5), f.top + f.plot_h() - y_of(w.channel_amax[c]), c,
        w.channel_amax[c], w.used_amax[c]);
    add(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"used\"/>", x,
        x + std::max(bar_w - 0.3, 0.5), y_of(w.used_amax[c]), y_of(w.used_amax[c]));
  }
  out += "\n";
  axes(out, f);
  for (double t : y_axis.ticks)
    add(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n", f.left - 4, y_of(t) + 4,
        y_axis.label(t).c_str());
  add(out,
      "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%zu output channels, largest max|w| "
      "first</text>\n",
      f.left + f.plot_w() / 2, f.height - 8, order.size());
  out += "</svg>\n";
  return out;
}

std::string sqnr_overview_svg(const std::vector<LayerView>& layers) {
  const double row = 17;
  const Frame f{760, 42 + row * static_cast<double>(layers.size()), 170, 60, 8, 34};
  double top = 1;
  for (const LayerView& l : layers)
    if (std::isfinite(l.sqnr_db)) top = std::max(top, l.sqnr_db);
  top = std::ceil(top / 10.0) * 10.0;

  std::string out;
  open_svg(out, f, "SQNR per layer in graph order");
  for (double t = 0; t <= top + 1e-9; t += 10) {
    const double x = f.left + f.plot_w() * t / top;
    add(out,
        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
        "class=\"tick\" text-anchor=\"middle\">%.0f</text>\n",
        x, x, f.top, f.top + f.plot_h(), x, f.top + f.plot_h() + 14, t);
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerView& l = layers[i];
    const double y = f.top + row * static_cast<double>(i);
    const bool measured = !std::isnan(l.sqnr_db);
    const double value = std::isfinite(l.sqnr_db) ? std::max(0.0, l.sqnr_db) : (measured ? top : 0);
    const char* quality = !measured ? "unmeasured" : l.sqnr_db < 20 ? "poor" : l.sqnr_db < 30 ? "fair" : "good";
    char value_text[32] = "n/a";
    if (std::isinf(l.sqnr_db)) std::snprintf(value_text, sizeof value_text, "exact");
    if (std::isfinite(l.sqnr_db)) std::snprintf(value_text, sizeof value_text, "%.1f dB", l.sqnr_db);
    add(out,
        "<a href=\"#%s\"><text x=\"%.1f\" y=\"%.1f\" class=\"name\" text-anchor=\"end\">%s</text>"
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"%s\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%s</text></a>\n",
        l.id.c_str(), f.left - 6, y + row - 5, html_escape(l.name).c_str(), f.left, y + 2, f.plot_w() * value / top,
        row - 4, quality, f.left + f.plot_w() * value / top + 4, y + row - 5, value_text);
  }
  add(out,
      "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">SQNR (dB) of each layer's int8 output against "
      "float</text>\n",
      f.left + f.plot_w() / 2, f.height - 2);
  out += "</svg>\n";
  return out;
}

std::string sensitivity_svg(const TargetResult& t, double goal_agreement) {
  const double row = 30;
  const Frame f{760, 88 + row * static_cast<double>(t.sensitivity.size()), 190, 70, 40, 48};
  // Agreement sits near 100%: the axis starts at the lowest value, rounded down.
  double low = 100;
  for (const LayerSensitivity& l : t.sensitivity) low = std::min({low, l.only_it_float, l.only_it_int8});
  low = std::min(low, t.all_int8.agreement);
  if (goal_agreement >= 0) low = std::min(low, goal_agreement);
  double step = 0.1;  // round numbers, at most 8 ticks
  for (double s : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0})
    if ((100 - low) / s <= 7) {
      step = s;
      break;
    }
  low = std::max(0.0, std::floor(low / step - 1e-9) * step);
  const auto x_of = [&](double v) { return f.left + f.plot_w() * (v - low) / (100 - low); };

  std::string out;
  open_svg(out, f, "Per-layer sensitivity: agreement with float, only this layer in float or in int8");
  for (double v = low; v <= 100 + 1e-9; v += step)
    add(out,
        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
        "class=\"tick\" text-anchor=\"middle\">%g</text>\n",
        x_of(v), x_of(v), f.top, f.top + f.plot_h(), x_of(v), f.top + f.plot_h() + 14, v);
  const double all_int8 = x_of(t.all_int8.agreement);
  add(out,
      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>"
      "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">all int8 %.2f%%</text>\n",
      all_int8, all_int8, f.top - 4, f.top + f.plot_h(), all_int8, f.top - 8, t.all_int8.agreement);
  if (goal_agreement >= 0) {
    const double goal = x_of(goal_agreement);
    add(out,
        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#1f77b4\" stroke-width=\"2\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\" fill=\"#1f77b4\">goal %.2f%%</text>\n",
        goal, goal, f.top - 4, f.top + f.plot_h(), goal, f.top - 18, goal_agreement);
  }
  const std::set<std::string> kept(t.float_layers.begin(), t.float_layers.end());
  for (size_t i = 0; i < t.sensitivity.size(); ++i) {
    const LayerSensitivity& l = t.sensitivity[i];
    const double y = f.top + row * static_cast<double>(i);
    const bool in_float = kept.count(l.name) > 0;
    add(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"name\" text-anchor=\"end\"%s>%s%s</text>\n", f.left - 6,
        y + row / 2 + 3, in_float ? " font-weight=\"bold\"" : "", html_escape(l.name).c_str(),
        in_float ? " (float)" : "");
    const double bars[2] = {l.only_it_float, l.only_it_int8};
    const char* colours[2] = {"#2ca02c", "#d62728"};
    for (int k = 0; k < 2; ++k) {
      const double top = y + 3 + k * (row - 6) / 2;
      add(out,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
          "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%.2f%%</text>\n",
          f.left, top, std::max(0.0, x_of(bars[k]) - f.left), (row - 6) / 2 - 1, colours[k], x_of(bars[k]) + 4,
          top + (row - 6) / 2 - 3, bars[k]);
    }
  }
  add(out,
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"8\" fill=\"#2ca02c\"/><text x=\"%.1f\" y=\"%.1f\" "
      "class=\"tick\">only this layer in float (the rest int8)</text><rect x=\"%.1f\" y=\"%.1f\" width=\"10\" "
      "height=\"8\" fill=\"#d62728\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tick\">only this layer in int8 (the "
      "rest float)</text>\n",
      f.left, f.height - 12, f.left + 14, f.height - 4, f.left + 300, f.height - 12, f.left + 314, f.height - 4);
  out += "</svg>\n";
  return out;
}

}  // namespace octet
