// Bias correction (Nagel et al. 2019, section 4.2, the empirical form): the
// int8 weights' rounding error dW shifts each output channel's expected value
// by sum_k dW[o][k] * E[x_k]. With E[x] (each input channel's mean over the
// calibration images and positions, from the float pass) that shift is
// subtracted from the float bias before it is rounded to int32. Exact for
// 1 x 1 convs and linears; a k x k conv reads its input's borders less often
// than its centre (and padding's zeros), so there it is close, not exact.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/fold.h"
#include "quant/quantize.h"

namespace octet {

// `folded` with the biases of its weighted nodes corrected, except those named
// in `keep` (nodes kept in float). `channel_means[n]`: node n's output, as
// FloatPassRecord::channel_means gives it.
FloatModel correct_biases(const FloatModel& folded, const std::map<std::string, QuantizedWeights>& weights,
                          const std::vector<std::vector<double>>& channel_means, const std::set<std::string>& keep);

}  // namespace octet
