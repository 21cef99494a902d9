// What `octet report` shows, gathered in one place: the run summary, float vs
// int8 on the test set, and per layer of the quantized model its activation
// histogram with every amax method's choice, its weights' per-channel range,
// its SQNR and, for the layers that lose most, what to try.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evaluate/evaluate.h"
#include "quant/accuracy_target.h"
#include "quant/pipeline.h"

namespace octet {

// One amax method applied to a layer's recorded |x| histogram.
struct MethodChoice {
  std::string method;
  double amax = 0;
  double clipped_share = 0;  // share of values with |x| > amax
  double sqnr_db = 0;        // this tensor alone quantized at amax, estimated from the histogram
};

struct ActivationView {
  std::vector<int64_t> abs_histogram;  // |x| counts, TensorStats::kBins bins over [0, range)
  double range = 0, min = 0, max = 0;
  std::vector<MethodChoice> methods;  // every statistic method, in statistic_methods() order
  std::string chosen_method;          // as recorded in the quantized model
  double chosen_amax = 0;
  MethodChoice chosen;  // the chosen amax measured like the candidates
};

struct WeightView {
  std::vector<float> channel_amax;  // max |w| per output channel of the folded float weights
  std::vector<float> used_amax;     // 127 / weight scale per channel, as quantized
  double sqnr_db = 0;               // int8 weights (dequantized) against the float ones
};

struct LayerView {
  std::string name, op, id;                  // id: the HTML anchor (letters, digits and '-')
  std::optional<ActivationView> activation;  // layers with a scale of their own
  std::optional<WeightView> weights;         // conv and linear
  double sqnr_db = 0;                        // measured output SQNR against float (infinite: exact)
  double alone_db = 0;              // estimated cost of quantizing only this layer: its output at amax and its weights
  std::vector<std::string> advice;  // "what to try", for the layers that lose most
  bool in_float = false;            // kept in float (mixed precision): reads dequantized inputs, float weights
};

struct CalibrationReport {
  std::string checkpoint_path, quantized_path;  // quantized_path empty: quantized by the report itself
  std::string model, dataset, method, granularity, scheme, weight_rounding;
  int64_t calibration_samples = 0;
  bool equalized = false, bias_corrected = false;  // QuantizedModel's
  std::string calibration_from = "training split", test_from = "test split";  // or the user's files
  double percentile = 99.99;
  EvalReport eval;
  std::vector<LayerView> layers;  // graph order
  // With an accuracy target (octet report --min-agreement/--max-drop): its
  // search, whose model the report is of; the sensitivity chart and the decision.
  std::optional<TargetResult> target;
  AccuracyTarget goal;
};

// Calibrates `folded` again on the training images `model` was calibrated on
// (same count, same indices) so that the histograms are the ones its scales came from.
Calibration recalibrate(const Checkpoint& checkpoint, const FloatModel& folded, const QuantizedModel& model,
                        const DataOptions& data);

// Evaluates on the first `limit` test images (0: all) and gathers every view.
// `worst` layers (lowest SQNR) get advice.
CalibrationReport build_calibration_report(const Checkpoint& checkpoint, const FloatModel& folded,
                                           const Calibration& calibration, const QuantizedModel& model,
                                           const DataOptions& data, int64_t limit, double percentile,
                                           int worst = 3);

// Layers sorted by SQNR, lowest first.
std::vector<const LayerView*> worst_first(const CalibrationReport& report);

std::string calibration_report_json(const CalibrationReport& report);

}  // namespace octet
