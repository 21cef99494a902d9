// The trainer's step log (`octet train --step-log`, the Optimus lab's CSV
// `epoch,step,loss,acc`) and its aggregation into a curve: per-step losses are
// noisy, so fits use the means of windows of consecutive steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

struct StepRecord {
  int epoch = 0;
  int64_t step = 0;  // global optimizer step, counted from 1
  double loss = 0;
  double acc = 0;  // the mini-batch's training top-1, percent
};

struct StepLog {
  std::string path;
  std::vector<StepRecord> rows;
};

// Refuses, naming the file and line, a missing or different header, a row
// without four fields, a field that is not a number, a non-finite or negative
// loss, steps that do not increase, and a log without rows.
StepLog parse_step_log(const std::string& text, const std::string& path);
StepLog read_step_log(const std::string& path);

// The first `fraction` of a log's rows (at least one).
StepLog cut_step_log(const StepLog& log, double fraction);

// Means of loss and accuracy over windows of `window` consecutive rows; `step`
// is the window's mean step. The last, partial window is kept when it holds at
// least half a window.
struct Curve {
  std::vector<double> step, loss, acc;
  size_t size() const { return step.size(); }
};
Curve aggregate(const StepLog& log, int window);

// The default window: about 100 points over the log, at least 1 step.
int default_window(size_t rows);

}  // namespace octet
