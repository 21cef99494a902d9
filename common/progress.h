// A one-line progress indicator for long work (calibration, evaluation,
// training epochs). It draws only when standard error is a terminal, so logs
// and pipes stay clean, or when kForceProgressVariable is 1: set by a parent
// that copies this process's output to its own terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace octet {

inline constexpr char kForceProgressVariable[] = "OCTET_FORCE_PROGRESS";

class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();
  void advance(int64_t n = 1);
  void finish();

 private:
  void draw(bool force);
  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace octet
