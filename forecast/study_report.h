// `octet forecast study`: the Optimus lab over several runs (forecast/study.h)
// printed as tables, plotted and written as JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "forecast/study.h"

namespace octet {

struct StudyRequest {
  std::vector<std::string> runs;  // NAME=STEP_LOG, NAME ending in the depth
  std::string held_out;           // the run whose depth forecast the plot shows ("": the deepest)
  std::string svg, json;
  StudyOptions options;
};

// Prints the study to `out`; writes its plot to request.svg and its JSON to request.json when given.
void report_study(const StudyRequest& request, std::FILE* out);

}  // namespace octet
