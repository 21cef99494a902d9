// A histogram as a small standalone SVG bar chart (no plotting library needed).
#pragma once

#include <string>

#include "calibrate/layer_histograms.h"

namespace octet {

std::string histogram_svg(const std::string& title, const Histogram& histogram, const std::string& x_label);

}  // namespace octet
