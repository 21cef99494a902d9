#include "report/html_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/figures.h"

namespace octet {

namespace {
constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d2329;background:#f4f5f7;margin:0}
main{max-width:1220px;margin:0 auto;padding:18px 24px 40px}
h1{font-size:24px;margin:6px 0 2px}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid #d5d9de;padding-bottom:4px}
h3{font-size:16px;margin:0 0 8px}.sub{color:#5b6670;margin:0 0 14px}
table{border-collapse:collapse;background:#fff}td,th{padding:3px 9px;border-bottom:1px solid #e6e8eb;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:10px 0 14px}.card{background:#fff;border:1px solid #dde1e5;border-radius:6px;padding:10px 16px;min-width:150px}
.card b{display:block;font-size:24px}.card span{color:#5b6670}
.summary{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
.layer{background:#fff;border:1px solid #dde1e5;border-radius:6px;padding:12px 14px;margin:12px 0}
.layer .row{display:flex;gap:18px;flex-wrap:wrap}.layer .row>div{flex:1 1 560px;min-width:0}
.op{color:#5b6670;font-weight:400}.db{float:right;font-weight:600}
.advice{background:#fff8e6;border:1px solid #f0d890;border-radius:6px;padding:8px 14px;margin:8px 0}
.advice ul{margin:4px 0 2px 18px;padding:0}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:5px}
tr.chosen td{font-weight:700;background:#f1f6ff}
.chart{max-width:100%;height:auto;font-size:11px;display:block;margin:4px 0}
.chart .bars rect{fill:#5d7fa3}.chart .axis{fill:none;stroke:#333}.chart .tick{fill:#444}.chart .grid{stroke:#e3e6ea}
.chart .clipped{fill:#fde2e2}.chart .amax{stroke-width:1.6;stroke-dasharray:5 3}.chart .chosen{stroke-width:3.5}
.chart .chosen-label{font-weight:700;font-size:12px}.chart .channel{fill:#8da9c4}.chart .used{stroke:#1d2329;stroke-width:1.4}
.chart .name{fill:#1d2329}.chart a:hover .name{text-decoration:underline}
.chart .good{fill:#4c9a5b}.chart .fair{fill:#e0a93b}.chart .poor{fill:#cc4b4b}.chart .unmeasured{fill:#bbb}
.poor-db{color:#b23434}.fair-db{color:#a86f00}.good-db{color:#2f7a3e}
footer{color:#6b757e;margin-top:30px;font-size:12px}
)";

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string db_text(double db) {
  if (std::isnan(db)) return "n/a";
  if (std::isinf(db)) return "exact";
  return fmt("%.1f dB", db);
}

std::string share_text(double share) {
  if (share == 0) return "0";
  return share < 1e-5 ? "&lt; 0.001%" : fmt("%.2g%%", 100 * share);
}

const char* db_class(double db) {
  if (std::isnan(db)) return "";
  return db < 20 ? "poor-db" : db < 30 ? "fair-db" : "good-db";
}

double channel_spread(const WeightView& w) {
  float lo = INFINITY, hi = 0;
  for (float v : w.channel_amax)
    if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  return hi > 0 ? hi / lo : 1.0;
}

std::string layer_link(const LayerView& l) { return "<a href=\"#" + l.id + "\">" + html_escape(l.name) + "</a>"; }

std::string row(const std::string& key, const std::string& value) {
  return "<tr><th>" + key + "</th><td>" + html_escape(value) + "</td></tr>\n";
}

std::string summary_section(const CalibrationReport& r) {
  const EvalReport& e = r.eval;
  std::string out = "<section id=\"summary\"><h2>Model and run</h2><div class=\"summary\"><table>\n";
  out += row("model", r.model) + row("dataset", r.dataset) + row("checkpoint", r.checkpoint_path);
  out += row("quantized model", r.quantized_path.empty() ? "quantized by this report (not saved)" : r.quantized_path);
  out += row("amax method", r.method) + row("weight scales", r.granularity) + row("scheme", r.scheme);
  out += row("weight rounding", r.weight_rounding);
  if (r.equalized || r.bias_corrected)
    out += row("before rounding", std::string(r.equalized ? "cross-layer equalization" : "") +
                                      (r.equalized && r.bias_corrected ? ", " : "") +
                                      (r.bias_corrected ? "bias correction" : ""));
  out += row("calibration images", std::to_string(r.calibration_samples) + " (" + r.calibration_from + ")");
  out += row("percentile (for the percentile method)", fmt("%g", r.percentile));
  out += row("test images", std::to_string(e.images) + (r.test_from == "test split" ? "" : " (" + r.test_from + ")") +
                                (e.labelled ? "" : ", without labels"));
  out += "</table><div><div class=\"cards\">";
  auto card = [&](const std::string& value, const std::string& what) {
    out += "<div class=\"card\"><b>" + value + "</b><span>" + what + "</span></div>";
  };
  const bool masks = e.labelled_pixels > 0;  // a class per pixel: pixel accuracies and mean IoU
  if (e.labelled) {
    card(fmt("%.2f%%", e.float_top1), masks ? "float pixel accuracy" : "float top-1");
    card(fmt("%.2f%%", e.int8_top1), masks ? "int8 pixel accuracy" : "int8 top-1");
    card(fmt("%+.2f", e.int8_top1 - e.float_top1), "difference (points)");
  } else {
    card("&ndash;", "top-1 (no labels)");
  }
  if (masks) {
    card(fmt("%.2f%%", e.float_mean_iou), "float mean IoU");
    card(fmt("%.2f%%", e.int8_mean_iou), "int8 mean IoU");
  }
  card(fmt("%.2f%%", e.agreement), e.predictions_per_image > 1 ? "agreement (same class per pixel)"
                                                               : "agreement (same class)");
  out +=
      "</div><p class=\"sub\">Agreement: the share of test images (or pixels) where int8 and float predict the "
      "same class. "
      "SQNR: 10 log10(&Sigma;x&sup2; / &Sigma;(x &minus; x&#770;)&sup2;) of a layer's int8 output x&#770; against "
      "float "
      "x on the test images; it includes the error every earlier layer passed on.</p></div></div></section>\n";
  return out;
}

std::string worst_section(const CalibrationReport& r) {
  std::string out =
      "<section id=\"worst\"><h2>Layers by SQNR, worst first</h2>\n<p class=\"sub\">SQNR: measured on the test "
      "images, with the error of every earlier layer. Alone: estimated for this layer quantized on its own (its output "
      "rounded at the chosen amax, from its histogram, and its int8 weights). Channel spread: largest over smallest "
      "max|w| of the output channels.</p>\n<table>\n<tr><th class=\"num\">#</th>"
      "<th>layer</th><th>op</th><th class=\"num\">SQNR</th>"
      "<th class=\"num\" title=\"estimated cost of quantizing only this layer (its output at amax and its "
      "weights)\">alone</th><th>chosen amax</th><th class=\"num\">clipped</th>"
      "<th class=\"num\">weight SQNR</th><th class=\"num\">channel spread</th></tr>\n";
  int rank = 0;
  for (const LayerView* l : worst_first(r)) {
    out += "<tr><td class=\"num\">" + std::to_string(++rank) + "</td><td>" + layer_link(*l) + "</td><td>" +
           html_escape(l->op) + "</td><td class=\"num " + db_class(l->sqnr_db) + "\">" + db_text(l->sqnr_db) +
           "</td><td class=\"num\">" + db_text(l->alone_db) + "</td>";
    if (l->activation)
      out +=
          "<td><span class=\"swatch\" style=\"background:" + std::string(method_colour(l->activation->chosen_method)) +
          "\"></span>" + html_escape(l->activation->chosen_method) + " " + fmt("%.4g", l->activation->chosen_amax) +
          "</td><td class=\"num\">" + share_text(l->activation->chosen.clipped_share) + "</td>";
    else
      out += "<td>int32 logits</td><td></td>";
    if (l->weights)
      out += "<td class=\"num\">" + db_text(l->weights->sqnr_db) + "</td><td class=\"num\">" +
             fmt("%.1fx", channel_spread(*l->weights)) + "</td>";
    else
      out += "<td></td><td></td>";
    out += "</tr>\n";
  }
  out += "</table>\n<h3 style=\"margin-top:16px\">SQNR in graph order</h3>\n" + sqnr_overview_svg(r.layers) +
         "</section>\n";
  return out;
}

std::string advice_section(const CalibrationReport& r) {
  std::string out =
      "<section id=\"what-to-try\"><h2>What to try</h2>\n<p class=\"sub\">For the layers that lose most.</p>\n";
  for (const LayerView* l : worst_first(r)) {
    if (l->advice.empty()) continue;
    out += "<div class=\"advice\"><b>" + layer_link(*l) + "</b> (" + html_escape(l->op) + ", " + db_text(l->sqnr_db) +
           ")<ul>";
    for (const std::string& a : l->advice) out += "<li>" + html_escape(a) + "</li>";
    out += "</ul></div>\n";
  }
  return out + "</section>\n";
}

std::string methods_table(const ActivationView& a) {
  std::string out =
      "<table><tr><th>method</th><th class=\"num\">amax</th><th class=\"num\">clipped</th>"
      "<th class=\"num\" title=\"this tensor alone quantized at amax, estimated from its histogram\">"
      "SQNR alone</th></tr>\n";
  for (const MethodChoice& m : a.methods) {
    const bool chosen =
        m.method == a.chosen_method && std::abs(m.amax - a.chosen_amax) <= 1e-4 * std::max(m.amax, 1e-12);
    out += std::string(chosen ? "<tr class=\"chosen\">" : "<tr>") +
           "<td><span class=\"swatch\" style=\"background:" + method_colour(m.method) + "\"></span>" + m.method +
           (chosen ? " (chosen)" : "") + "</td><td class=\"num\">" + fmt("%.4g", m.amax) + "</td><td class=\"num\">" +
           share_text(m.clipped_share) + "</td><td class=\"num\">" + db_text(m.sqnr_db) + "</td></tr>\n";
  }
  const bool listed = std::any_of(a.methods.begin(), a.methods.end(), [&](const MethodChoice& m) {
    return m.method == a.chosen_method && std::abs(m.amax - a.chosen_amax) <= 1e-4 * std::max(m.amax, 1e-12);
  });
  // A model quantized on other calibration data (or another percentile) has an amax no method gives here.
  if (!listed)
    out += "<tr class=\"chosen\"><td>" + html_escape(a.chosen_method) +
           " (chosen, as recorded)</td><td class=\"num\">" + fmt("%.4g", a.chosen_amax) + "</td><td class=\"num\">" +
           share_text(a.chosen.clipped_share) + "</td><td class=\"num\">" + db_text(a.chosen.sqnr_db) + "</td></tr>\n";
  return out + "</table>\n";
}

std::string layer_section(const LayerView& l) {
  std::string out = "<article class=\"layer\" id=\"" + l.id + "\"><h3>" + html_escape(l.name) + " <span class=\"op\">" +
                    html_escape(l.op) + (l.in_float ? " &middot; runs in float" : "") + "</span><span class=\"db " +
                    db_class(l.sqnr_db) + "\">SQNR " +
                    db_text(l.sqnr_db) + "</span></h3>\n<div class=\"row\">";
  if (const auto& a = l.activation) {
    out += "<div><b>Output activations</b> <span class=\"op\">(|x| on the calibration images, log count; range " +
           fmt("%.4g", a->min) + " to " + fmt("%.4g", a->max) + ")</span>\n" + activation_histogram_svg(*a) +
           methods_table(*a) + "</div>";
  } else {
    out += "<div><b>Output</b> <span class=\"op\">(int32 logits, not rounded to int8)</span></div>";
  }
  if (const auto& w = l.weights) {
    out +=
        "<div><b>Weights</b> <span class=\"op\">(max |w| per output channel; black: the amax each channel was "
        "quantized with)</span>\n" +
        channel_spread_svg(*w) + "<table>" + row("output channels", std::to_string(w->channel_amax.size())) +
        row("largest / smallest channel range", fmt("%.1fx", channel_spread(*w))) +
        row("weight SQNR (int8 against float)", db_text(w->sqnr_db)) + "</table></div>";
  }
  out += "</div>";
  if (!l.advice.empty()) {
    out += "<div class=\"advice\"><b>What to try</b><ul>";
    for (const std::string& a : l.advice) out += "<li>" + html_escape(a) + "</li>";
    out += "</ul></div>";
  }
  return out + "</article>\n";
}

// The accuracy target's search: the goal, the scores, the layers kept in float
// and why (the sensitivity chart).
std::string target_section(const CalibrationReport& r) {
  if (!r.target) return "";
  const TargetResult& t = *r.target;
  std::string goal;
  if (r.goal.min_agreement >= 0) goal += fmt("agreement with float at least %.2f%%", r.goal.min_agreement);
  if (r.goal.max_drop >= 0) goal += (goal.empty() ? "" : ", ") + fmt("top-1 at most %.2f points below float", r.goal.max_drop);
  std::string layers;
  for (const std::string& name : t.float_layers) layers += (layers.empty() ? "" : ", ") + name;
  std::string out =
      "<section id=\"accuracy-target\"><h2>Accuracy target and per-layer sensitivity</h2>\n<p class=\"sub\">"
      "Measured on " + std::to_string(t.validation_images) +
      " validation images: training images other than the calibration ones, never the test set.</p>\n<table>" +
      row("goal", goal) + row("all int8", fmt("agreement %.2f%%", t.all_int8.agreement)) +
      row("decision", t.met ? (t.float_layers.empty() ? "met with every layer in int8"
                                                      : "met with these layers in float: " + layers)
                            : "not met; the closest model keeps in float: " + layers) +
      row("chosen model", fmt("agreement %.2f%%", t.chosen.agreement)) + "</table>\n";
  out += "<p class=\"sub\">The search keeps in float first the layers whose float copy gains most (green), then "
         "those whose int8 copy loses most alone (red), fewest MACs among equals, until the goal holds.</p>\n";
  return out + sensitivity_svg(t, r.goal.min_agreement) + "</section>\n";
}

std::string legend() {
  std::string out = "<p class=\"sub\">amax lines: ";
  for (const char* m : {"max", "sigma3", "percentile", "entropy", "mse"})
    out += std::string("<span class=\"swatch\" style=\"background:") + method_colour(m) + "\"></span>" + m + " &nbsp; ";
  return out +
         "(dashed); the chosen one is drawn thick and labelled; red shading: values it clips. "
         "&ldquo;SQNR alone&rdquo;: the tensor quantized at that amax, on its own, estimated from its histogram.</p>\n";
}
}  // namespace

std::string calibration_report_html(const CalibrationReport& r) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>octet calibration report: " +
      html_escape(r.model) + " on " + html_escape(r.dataset) + "</title>\n<style>" + kStyle +
      "</style></head>\n<body><main>\n<h1>Calibration report: " + html_escape(r.model) + " on " +
      html_escape(r.dataset) + "</h1>\n<p class=\"sub\">int8 against float, layer by layer (octet report)</p>\n";
  out += summary_section(r) + worst_section(r) + advice_section(r) + target_section(r);
  out += "<section id=\"layers\"><h2>Per layer, in graph order</h2>\n" + legend();
  for (const LayerView& l : r.layers) out += layer_section(l);
  out +=
      "</section>\n<footer>Written by octet report. Self-contained: no script, no external resource.</footer>\n"
      "</main></body></html>\n";
  return out;
}

}  // namespace octet
