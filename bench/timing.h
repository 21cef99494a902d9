// Timing helpers shared by the `octet bench` subcommands.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace octet {

using BenchClock = std::chrono::steady_clock;

inline double milliseconds_since(BenchClock::time_point start) {
  return std::chrono::duration<double, std::milli>(BenchClock::now() - start).count();
}

// The 1-minute load average before a benchmark: other work on the machine
// skews every timing, so the reports carry it.
double load_average();

// The CPU the numbers come from, as /proc/cpuinfo names it, and its core
// count (e.g. "AMD EPYC 9R14 96-Core Processor, 2 cores").
std::string cpu_description();

double median(std::vector<double> values);
double fastest(const std::vector<double>& values);  // the smallest; values not empty

// "1,32,256" -> {1, 32, 256}; fails naming `option` on anything else.
std::vector<int64_t> parse_positive_list(const std::string& text, const std::string& option, bool allow_zero);

// Milliseconds of each of `iterations` calls of `run` after `warmup` calls.
template <typename Run>
std::vector<double> time_calls(int warmup, int iterations, Run run) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    const auto start = BenchClock::now();
    run();
    ms.push_back(milliseconds_since(start));
  }
  return ms;
}

}  // namespace octet
