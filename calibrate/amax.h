// Choosing the clipping value amax of a tensor from its statistics. Values are
// then quantized symmetrically: scale = 127 / amax, q = clamp(round(x * scale)).
//   max         max |x|
//   sigma3      max(|mean - 3 std|, |mean + 3 std|), as in the course lab
//   percentile  the given quantile of |x| (default 99.99)
//   entropy     TensorRT's search: the threshold whose 128-level quantization of
//               the |x| histogram has the lowest KL divergence from it
//   mse         the threshold with the lowest count-weighted squared error of the
//               quantized bin centres
// `auto` and `auto-global` are not functions of the statistics alone: quant/
// runs them on data.
#pragma once

#include <string>
#include <vector>

#include "calibrate/histogram.h"

namespace octet {

enum class AmaxMethod { Max, Sigma3, Percentile, Entropy, Mse, Auto, AutoGlobal };

AmaxMethod amax_method_from_name(const std::string& name);  // fails listing the known names
const char* amax_method_name(AmaxMethod method);
// Whether the method scores int8 models on calibration data (auto,
// auto-global) instead of reading the statistics.
bool scores_models(AmaxMethod method);
// The methods that are functions of the statistics (every method but the autos).
const std::vector<AmaxMethod>& statistic_methods();

// `levels`: the grid's levels above 0, 127 (signed int8) or 255 (a tensor
// stored unsigned); mse's rounding error depends on them.
double compute_amax(const TensorStats& stats, AmaxMethod method, double percentile = 99.99, int levels = 127);

// The entropy search's choice from the divergence of every threshold bin
// (kl[i], infinite where not a candidate): the largest i whose divergence is
// within rounding (1e-9 relative, 1e-12 absolute) of the smallest, as
// TensorRT takes the largest threshold on a tie.
int entropy_threshold(const std::vector<double>& kl);

// The mse search's choice from the error of every threshold bin (err[i],
// infinite where not a candidate): the smallest i whose error is within
// rounding (as entropy_threshold) of the smallest.
int mse_threshold(const std::vector<double>& err);

}  // namespace octet
