#include "tools/report_advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace octet {

namespace {
std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

// Independent noise sources add: 1 / snr = sum of 1 / snr_i.
double combined_db(double a_db, double b_db) {
  return -10.0 * std::log10(std::pow(10.0, -a_db / 10.0) + std::pow(10.0, -b_db / 10.0));
}

const MethodChoice* method(const ActivationView& a, const std::string& name) {
  for (const MethodChoice& m : a.methods)
    if (m.method == name) return &m;
  return nullptr;
}
}  // namespace

std::vector<std::string> advice_for(const LayerView& layer, const CalibrationReport& report) {
  std::vector<std::string> out;
  double own_db = INFINITY;  // what quantizing this layer alone would cost

  if (const auto& a = layer.activation) {
    own_db = a->chosen.sqnr_db;
    const MethodChoice& best =
        *std::max_element(a->methods.begin(), a->methods.end(),
                          [](const MethodChoice& x, const MethodChoice& y) { return x.sqnr_db < y.sqnr_db; });
    if (a->chosen.clipped_share > 1e-3)
      out.push_back("The chosen amax (" + a->chosen_method + ") clips " +
                    format("%.2f%%", 100 * a->chosen.clipped_share) +
                    " of this tensor's values; a method with a larger amax keeps the tail (max would use " +
                    format("%.4g", a->methods.front().amax) + ").");
    const MethodChoice* p = method(*a, "percentile");
    if (a->chosen_method == "max" && p && p->amax > 0 && a->chosen_amax > 4 * p->amax)
      out.push_back("max|x| is " + format("%.1fx", a->chosen_amax / p->amax) + " the " +
                    format("%.4g", report.percentile) +
                    "th percentile: a few outliers take the range, so the bulk of the values gets few levels; "
                    "entropy, mse or percentile clip them.");
    if (best.method != a->chosen_method && best.sqnr_db > a->chosen.sqnr_db + 1.0)
      out.push_back("On its own this tensor would do best with " + best.method +
                    format(" (%.1f dB against %.1f dB);", best.sqnr_db, a->chosen.sqnr_db) +
                    (report.method == "auto"
                         ? " auto kept " + a->chosen_method +
                               " because the network's output was closer to float with it, so compare"
                               " both with `octet quantize --method " +
                               best.method + "`."
                         : " try `octet quantize --method " + best.method + "`."));
  }
  if (const auto& w = layer.weights) {
    own_db = std::isfinite(own_db) ? combined_db(own_db, w->sqnr_db) : w->sqnr_db;
    float lo = INFINITY, hi = 0;
    for (float v : w->channel_amax)
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    const double spread = hi > 0 ? hi / lo : 1.0;
    if (report.granularity == "per-tensor" && spread > 4)
      out.push_back("Its output channels' weight ranges span " + format("%.0fx", spread) +
                    ": per-tensor scales leave the small channels few levels; try `--granularity per-channel`.");
    if (w->sqnr_db < 30 && report.weight_rounding == "nearest")
      out.push_back("Its int8 weights are far from float (" + format("%.1f dB", w->sqnr_db) +
                    "); try `--weight-rounding gptq`, which compensates each rounding error in the other weights.");
  }
  if (std::isfinite(own_db) && layer.sqnr_db < own_db - 3.0)
    out.push_back("Quantizing this layer alone would cost about " + format("%.1f dB", own_db) +
                  format(" of SQNR; the measured %.1f dB", layer.sqnr_db) +
                  " is mostly error carried in from earlier layers, so look first at the worst layer above it.");
  if (out.empty()) {
    // Nothing is mis-set: say which half of the layer costs more.
    const double act_db = layer.activation ? layer.activation->chosen.sqnr_db : INFINITY;
    const double weight_db = layer.weights ? layer.weights->sqnr_db : INFINITY;
    if (weight_db < act_db - 3.0)
      out.push_back(
          "Its int8 weights (" + format("%.1f dB", weight_db) + ") cost more than rounding its output (" +
          format("%.1f dB", act_db) + " alone)" +
          (report.granularity == "per-tensor" ? std::string("; try `--granularity per-channel`.")
           : report.weight_rounding == "nearest"
               ? std::string("; try `--weight-rounding gptq`.")
               : std::string(", and per-channel scales and GPTQ are already on: int8 weights cost this much here.")));
    else if (act_db < weight_db - 3.0)
      out.push_back("Rounding its output (" + format("%.1f dB", act_db) + " alone) costs more than its weights" +
                    (std::isfinite(weight_db) ? format(" (%.1f dB)", weight_db) : std::string()) +
                    ", and no other amax method does better on this tensor: int8 activations cost this much here.");
    else
      out.push_back("Its weights and its output rounding cost about the same" +
                    format(" (%.1f dB and %.1f dB alone)", weight_db, act_db) +
                    " and no option is mis-set: int8 costs this much here. tools/method_table.sh compares every method "
                    "and granularity.");
  }
  return out;
}

}  // namespace octet
