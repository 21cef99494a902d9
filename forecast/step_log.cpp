#include "forecast/step_log.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace octet {

namespace {

double parse_number(const std::string& field, const std::string& where, const char* name) {
  const char* begin = field.c_str();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(begin, &end);
  check(end != begin && *end == '\0' && errno != ERANGE, where + ": " + name + " '" + field + "' is not a number");
  check(std::isfinite(value), where + ": " + name + " is " + field + ", not a finite number");
  return value;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

StepLog parse_step_log(const std::string& text, const std::string& path) {
  StepLog log;
  log.path = path;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++line_number;
    line = trimmed(line);
    const std::string where = path + ":" + std::to_string(line_number);
    if (!header_seen) {
      check(line == "epoch,step,loss,acc",
            where + ": expected the step-log header 'epoch,step,loss,acc' (octet train --step-log), found '" +
                line + "'");
      header_seen = true;
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, ',')) fields.push_back(field);
    check(fields.size() == 4 && line.back() != ',',
          where + ": expected 4 fields epoch,step,loss,acc, found " + std::to_string(fields.size()));
    StepRecord r;
    const double epoch = parse_number(fields[0], where, "epoch");
    const double step = parse_number(fields[1], where, "step");
    check(epoch >= 0 && epoch == std::floor(epoch), where + ": epoch '" + fields[0] + "' is not a whole number");
    check(step >= 1 && step == std::floor(step), where + ": step '" + fields[1] + "' is not a whole number >= 1");
    r.epoch = static_cast<int>(epoch);
    r.step = static_cast<int64_t>(step);
    r.loss = parse_number(fields[2], where, "loss");
    r.acc = parse_number(fields[3], where, "acc");
    check(r.loss >= 0, where + ": loss " + fields[2] + " is negative");
    if (!log.rows.empty() && r.step <= log.rows.back().step)
      fail(where + ": step " + fields[1] + " does not follow step " + std::to_string(log.rows.back().step));
    log.rows.push_back(r);
  }
  check(header_seen, path + ": empty file, expected a step log 'epoch,step,loss,acc' (octet train --step-log)");
  check(!log.rows.empty(), path + ": the step log has a header but no rows");
  return log;
}

StepLog read_step_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot read step log '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_step_log(text.str(), path);
}

StepLog cut_step_log(const StepLog& log, double fraction) {
  check(fraction > 0 && fraction <= 1, "the cut must be a fraction in (0, 1], not " + std::to_string(fraction));
  StepLog cut;
  cut.path = log.path;
  const auto kept = std::max<size_t>(1, static_cast<size_t>(std::llround(fraction * static_cast<double>(log.rows.size()))));
  cut.rows.assign(log.rows.begin(), log.rows.begin() + static_cast<std::ptrdiff_t>(kept));
  return cut;
}

Curve aggregate(const StepLog& log, int window) {
  check(window >= 1, "the aggregation window must be at least 1 step, not " + std::to_string(window));
  Curve curve;
  const size_t w = static_cast<size_t>(window);
  for (size_t begin = 0; begin < log.rows.size(); begin += w) {
    const size_t end = std::min(log.rows.size(), begin + w);
    if (end - begin < (w + 1) / 2 && begin > 0) break;
    double step = 0, loss = 0, acc = 0;
    for (size_t i = begin; i < end; ++i) {
      step += static_cast<double>(log.rows[i].step);
      loss += log.rows[i].loss;
      acc += log.rows[i].acc;
    }
    const double n = static_cast<double>(end - begin);
    curve.step.push_back(step / n);
    curve.loss.push_back(loss / n);
    curve.acc.push_back(acc / n);
  }
  return curve;
}

int default_window(size_t rows) { return std::max(1, static_cast<int>(rows / 100)); }

}  // namespace octet
