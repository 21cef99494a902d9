// Quantization to an accuracy target (quantize --min-agreement, --max-drop):
// measure how much each weighted layer costs in int8, then keep the costliest
// in float (mixed precision, NodeQuant::in_float), the cheapest in MACs first
// among equals, until int8 agrees with float on a validation split of the
// training images (never the test set). Scales stay those of the all-int8
// model. Deterministic: the same inputs give the same model.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/progress.h"
#include "data/dataset.h"
#include "graph/fold.h"
#include "qmodel/quantized_model.h"

namespace octet {

struct AccuracyTarget {
  double min_agreement = -1;  // percent of validation images where int8 and float agree; < 0: none
  double max_drop = -1;       // points of top-1 int8 may lose against float (needs labels); < 0: none
  bool set() const { return min_agreement >= 0 || max_drop >= 0; }
};

// A model's standing on the validation images.
struct ValidationScore {
  double agreement = 0;              // percent
  double float_top1 = 0, top1 = 0;  // percent; 0 without labels
};

struct LayerSensitivity {
  std::string name, op;
  double mac_share = 0;
  double only_it_float = 0;  // agreement with this layer alone in float
  double only_it_int8 = 0;   // agreement with this layer alone in int8 (every other weighted layer in float)
};

struct TargetResult {
  QuantizedModel model;  // the best model found: the target met with the fewest float layers, else the closest
  bool met = false;
  ValidationScore all_int8, chosen;
  std::vector<LayerSensitivity> sensitivity;  // every weighted layer but the output, in graph order
  std::vector<std::string> float_layers;      // the weighted layers kept in float, in the order chosen
  int64_t validation_images = 0;
};

// `int8` is the all-int8 model quantized from `folded`; `validation` holds
// images (labels where it has them) normalised by `mean` and `std`. The
// per-layer sensitivity is measured where the all-int8 model misses the
// target, or always with `always_measure_sensitivity` (the report's chart).
TargetResult quantize_to_target(const QuantizedModel& int8, const FloatModel& folded, const Dataset& validation,
                                const AccuracyTarget& target, bool always_measure_sensitivity = false);

// Each weighted layer's sensitivity (every one but the output, in graph
// order), on `validation` as quantize_to_target measures it; `progress`
// advances once per layer. Python's octet.sensitivity.
std::vector<LayerSensitivity> layer_sensitivity(const QuantizedModel& int8, const FloatModel& folded,
                                                const Dataset& validation, Progress* progress = nullptr);

// The per-layer table as `quantize --json` and the Python module give it.
nlohmann::json sensitivity_json(const std::vector<LayerSensitivity>& layers);

// The search as `quantize --json` and the Python module give it.
nlohmann::json target_json(const TargetResult& result, const AccuracyTarget& target);

// The training-split indices of `samples` validation images, evenly spaced
// half-way between those calibration_indices(size, calibration) picks.
std::vector<int64_t> validation_indices(int64_t size, int64_t samples, int64_t calibration);

}  // namespace octet
