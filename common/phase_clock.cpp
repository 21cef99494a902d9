#include "common/phase_clock.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace octet {

namespace {
// Linux keeps the process's resident high-water mark (VmHWM); writing 5 to
// clear_refs resets it to the current size, so each phase sees its own peak.
void reset_peak_memory() {
  if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

double peak_memory_mb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::atof(line + 6);
  std::fclose(f);
  return kb / 1024.0;
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
}  // namespace

void PhaseClock::start(const std::string& name) {
  if (running_ && phases_.back().name == name) return;
  stop();
  phases_.push_back({name, 0, 0});
  reset_peak_memory();
  started_ = std::chrono::steady_clock::now();
  started_cpu_ = process_cpu_seconds();
  running_ = true;
}

void PhaseClock::stop() {
  if (!running_) return;
  running_ = false;
  phases_.back().seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  phases_.back().cpu_seconds = process_cpu_seconds() - started_cpu_;
  phases_.back().peak_mb = peak_memory_mb();
}

double PhaseClock::total_seconds() const {
  double total = 0;
  for (const PhaseTime& p : phases_) total += p.seconds;
  return total;
}

double PhaseClock::total_cpu_seconds() const {
  double total = 0;
  for (const PhaseTime& p : phases_) total += p.cpu_seconds;
  return total;
}

double PhaseClock::peak_mb() const {
  double peak = 0;
  for (const PhaseTime& p : phases_) peak = std::max(peak, p.peak_mb);
  return peak;
}

}  // namespace octet
