// The calibration report as one self-contained HTML page: inline CSS and SVG,
// no script and no external resource, so it opens offline in any browser.
#pragma once

#include <string>

#include "report/data.h"

namespace octet {

std::string calibration_report_html(const CalibrationReport& report);

}  // namespace octet
