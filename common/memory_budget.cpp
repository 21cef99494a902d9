#include "common/memory_budget.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace octet {

uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0, total_kib = 0;
  std::string unit;
  bool found = false;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:" || key == "SwapFree:") {
      total_kib += kib;
      found = true;
    }
  }
  return found ? total_kib * 1024 : 0;
}

std::string byte_count(double bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 6) {
    bytes /= 1000;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

void check_batch_fits(const std::string& what, int64_t batch, double bytes_per_sample, const std::string& buffers,
                      uint64_t available) {
  if (available == 0 || bytes_per_sample <= 0) return;
  const double needed = static_cast<double>(batch) * bytes_per_sample;
  if (needed <= static_cast<double>(available)) return;
  const double fits = std::floor(static_cast<double>(available) / bytes_per_sample);
  std::ostringstream message;
  message << what << ": a batch of " << batch << " does not fit in memory: its " << buffers << " need "
          << byte_count(needed) << " (" << byte_count(bytes_per_sample) << " per sample), and "
          << byte_count(static_cast<double>(available)) << " are available; ";
  if (fits >= 1)
    message << "the largest batch that fits is " << static_cast<int64_t>(fits);
  else
    message << "not even one sample fits";
  throw Error(message.str());
}

}  // namespace octet
