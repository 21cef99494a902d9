// The inline SVG charts of `octet report` (no plotting library, no script):
// a layer's |x| histogram with every method's amax, its weights' per-channel
// ranges, and the SQNR of every layer.
#pragma once

#include <string>
#include <vector>

#include "report/data.h"

namespace octet {

// The colour each amax method is drawn in (charts and tables agree).
const char* method_colour(const std::string& method);

// Log-count histogram of |x| up to the largest amax, a line per method's amax,
// the chosen one thick and labelled, the clipped region shaded.
std::string activation_histogram_svg(const ActivationView& activation);

// max |w| of every output channel, largest first, with the amax each channel was
// quantized with marked on its bar.
std::string channel_spread_svg(const WeightView& weights);

// One bar per layer, graph order, linking to the layer's section.
std::string sqnr_overview_svg(const std::vector<LayerView>& layers);

// Per weighted layer, graph order: agreement with float on the validation
// images with only it in float, and with only it in int8; the layers the
// target's search kept in float marked, the all-int8 agreement and the goal
// (`goal_agreement` < 0: none) as vertical lines.
std::string sensitivity_svg(const TargetResult& target, double goal_agreement);

std::string html_escape(const std::string& text);

}  // namespace octet
