#include "report/advice.h"

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

const MethodChoice* method(const ActivationView& a, const std::string& name) {
  for (const MethodChoice& m : a.methods)
    if (m.method == name) return &m;
  return nullptr;
}

// Which half of a layer costs more on its own, as ", mostly its weights", or "".
std::string larger_cost(const LayerView& l) {
  if (!l.activation || !l.weights) return "";
  return l.weights->sqnr_db < l.activation->chosen.sqnr_db ? ", mostly its weights" : ", mostly its output rounding";
}

// The measured error is far below what this layer alone costs: name the layers
// above it that cost most on their own, or say that none stands out.
std::string carried_in(const LayerView& layer, const CalibrationReport& report) {
  std::vector<const LayerView*> above;
  for (const LayerView& l : report.layers) {
    if (&l == &layer) break;
    if (std::isfinite(l.alone_db)) above.push_back(&l);
  }
  std::string out = "Quantizing this layer alone would cost about " + format("%.1f dB", layer.alone_db) +
                    format(" of SQNR; the measured %.1f dB is mostly error carried in from the ", layer.sqnr_db) +
                    std::to_string(above.size()) + " layers before it. ";
  if (above.empty()) return out;
  std::sort(above.begin(), above.end(),
            [](const LayerView* a, const LayerView* b) { return a->alone_db < b->alone_db; });
  const double median = above[above.size() / 2]->alone_db;
  if (above.front()->alone_db < median - 3.0) {
    out += "Those that cost most on their own:";
    for (size_t k = 0; k < above.size() && k < 3 && above[k]->alone_db < median - 3.0; ++k)
      out += std::string(k ? "," : "") + " " + above[k]->name + format(" (%.1f dB alone", above[k]->alone_db) +
             larger_cost(*above[k]) + ")";
    return out + "; improve them first.";
  }
  return out + "None of them stands out (" + format("%.1f to ", above.front()->alone_db) +
         format("%.1f dB alone", above.back()->alone_db) +
         "): the rounding noise of every layer adds up with depth, and no amax or weight option removes it; "
         "only training with int8 in the loop (which octet does not do) would.";
}
}  // namespace

std::vector<std::string> advice_for(const LayerView& layer, const CalibrationReport& report) {
  std::vector<std::string> out;

  if (const auto& a = layer.activation) {
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
    if (best.method != a->chosen_method && best.sqnr_db > a->chosen.sqnr_db + 1.0) {
      const std::string why =
          report.method == "auto"
              ? " auto kept " + a->chosen_method +
                    " because the network's output was closer to float with it, so compare both with `octet "
                    "quantize --method " + best.method + "`."
          : report.method == "auto-global"
              ? " auto-global gave every tensor " + a->chosen_method +
                    "'s amax, the closer of two whole models to float; `--method auto` chooses tensor by tensor "
                    "(on a large network at several times the time)."
              : " try `octet quantize --method " + best.method + "`.";
      out.push_back("On its own this tensor would do best with " + best.method +
                    format(" (%.1f dB against %.1f dB);", best.sqnr_db, a->chosen.sqnr_db) + why);
    }
  }
  if (const auto& w = layer.weights) {
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
  if (std::isfinite(layer.alone_db) && layer.sqnr_db < layer.alone_db - 3.0) out.push_back(carried_in(layer, report));
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
