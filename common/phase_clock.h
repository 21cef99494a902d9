// Wall time and peak resident memory of the phases of a long command (the
// quantizer's loading, calibration pass, weight rounding, amax search,
// writing), for the breakdown `octet quantize` prints and writes to --json.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace octet {

struct PhaseTime {
  std::string name;
  double seconds = 0;
  double cpu_seconds = 0;  // CPU time of all threads: on a shared machine, steadier than wall time
  double peak_mb = 0;  // highest resident set size during the phase (since the start where it cannot be reset)
};

class PhaseClock {
 public:
  // Ends the running phase and starts `name`; starting the running phase again is a no-op.
  void start(const std::string& name);
  // Ends the running phase.
  void stop();
  const std::vector<PhaseTime>& phases() const { return phases_; }
  double total_seconds() const;
  double total_cpu_seconds() const;
  double peak_mb() const;

 private:
  std::vector<PhaseTime> phases_;
  bool running_ = false;
  std::chrono::steady_clock::time_point started_;
  double started_cpu_ = 0;
};

}  // namespace octet
