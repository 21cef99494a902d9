// `octet forecast speed`: the time to a target over workers and parameter
// servers from Optimus's speed model (forecast/speed_model.h), as a table, a
// plot and JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace octet {

struct SpeedRequest {
  double steps = 0, batch = 128;
  int max_workers = 16;
  std::vector<double> servers = {2, 4};
  std::string step_times;  // CSV p,w,seconds of measured steps ("": Optimus's coefficients)
  std::string svg, json;
};

// Prints the table to `out`; writes its plot to request.svg and its JSON to request.json when given.
void report_speed(const SpeedRequest& request, std::FILE* out);

}  // namespace octet
