// `octet forecast fit`: one run's loss curve (or its first part) fitted and
// forecast to a target, alone and from complete runs of its family, printed
// and written as JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "forecast/study.h"

namespace octet {

struct FitRequest {
  std::string log, record, json;
  std::vector<std::string> with_runs;  // NAME=STEP_LOG of complete runs of the family
  double depth = -1;                   // this run's depth (-1: the family's runs alike)
  double cut = 1, target_acc = 0, target_loss = 0, restart_at = -1;
  double gap_fraction = 0.05, relative_change = 0.01;
  StudyOptions options;
};

// Prints the fit and its forecasts to `out`, and writes them to request.json when given.
void report_fit(const FitRequest& request, std::FILE* out);

}  // namespace octet
