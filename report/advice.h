// The "what to try" note of `octet report`: a few plain sentences on why a
// layer loses accuracy (clipping, outliers, weight range, error carried in from
// earlier layers) and which option of `octet quantize` addresses it.
#pragma once

#include <string>
#include <vector>

#include "report/data.h"

namespace octet {

std::vector<std::string> advice_for(const LayerView& layer, const CalibrationReport& report);

}  // namespace octet
