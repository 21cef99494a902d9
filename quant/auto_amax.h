// `--method auto`, scored on the int8 runtime: walking the quantization points
// in graph order, each candidate amax is built into the int8 model it makes
// (earlier points as decided, later ones at a provisional amax) and the one
// whose logits are closest (softmax KL summed over the scored calibration images) to
// float's wins. Scoring the integer model itself counts the later points'
// rounding too, and runs at int8 speed. The int8 outputs up to the point being
// decided are computed once; each candidate runs only the rest of the
// network, and stops as soon as it cannot win (its partial sum passes a
// complete total), the images most sensitive to the logits first.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/amax.h"
#include "calibrate/calibrate.h"
#include "common/tensor.h"
#include "graph/graph.h"
#include "qmodel/quantized_model.h"

namespace octet {

// The int8 model of an amax and a method name per float node.
using Int8ModelBuilder =
    std::function<QuantizedModel(const std::vector<double>& amax, const std::vector<std::string>& methods)>;

// What the search walks: the quantized graph, and for every quantization
// point (a float node, in graph order) the quantized node whose scale it sets.
struct AutoSearchPoints {
  const Graph* graph = nullptr;
  std::vector<int> float_nodes;
  std::vector<int> quantized_nodes;
  std::vector<int> levels;  // per point: its grid's levels above 0 (compute_amax), 127 or 255 (stored unsigned)
};

// One candidate amax of a point and the method that gave it.
struct AmaxCandidate {
  double amax;
  AmaxMethod method;
};

// The candidates `auto` scores at one point, from the amax each method it
// tries gives there (`by_method`, mse's among them): mse's first, the model as
// it stands; then the others in their order, but none within rounding (1e-4
// relative) of an amax already listed, and none outside [0.6, 1.4] x mse's
// amax (auto_amax.cpp says why).
std::vector<AmaxCandidate> scored_candidates(const std::vector<AmaxCandidate>& by_method);

// Whether a finalist of a point's race is out before the images after the
// shortlist: its KL over the shortlist (`challenger_shortlist`) exceeds the
// model as it stands's (`incumbent_shortlist`) by more than a tenth of the
// latter's KL over the images after it (`incumbent_rest`). auto_amax.cpp says why.
bool trails_too_far(double challenger_shortlist, double incumbent_shortlist, double incumbent_rest);

// Sets `amax` and `methods` (by float node) at every point: the winner among
// its scored_candidates of max, percentile (at `percentile`), entropy and mse,
// scored against `target`, float's logits on the calibration images.
void choose_auto_amax(const AutoSearchPoints& points, const Int8ModelBuilder& build, const Calibration& calibration,
                      const FloatTensor& target, double percentile, std::vector<double>* amax,
                      std::vector<std::string>* methods);

// The same choice by brute force, the oracle of choose_auto_amax: every
// candidate built into the whole model and scored on every image, nothing
// stopped early, then the same rule applied to the sums.
void choose_auto_amax_exhaustive(const AutoSearchPoints& points, const Int8ModelBuilder& build,
                                 const Calibration& calibration, const FloatTensor& target, double percentile,
                                 std::vector<double>* amax, std::vector<std::string>* methods);

}  // namespace octet
