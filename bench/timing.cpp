#include "bench/timing.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"

namespace octet {

double load_average() {
  double load = 0;
  return getloadavg(&load, 1) == 1 ? load : 0;
}

std::string cpu_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      const size_t value = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
      if (value != std::string::npos) model = line.substr(value);
      break;
    }
  const unsigned cores = std::thread::hardware_concurrency();
  return model + ", " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double fastest(const std::vector<double>& values) { return *std::min_element(values.begin(), values.end()); }

std::vector<int64_t> parse_positive_list(const std::string& text, const std::string& option, bool allow_zero) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int64_t v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    check(used == item.size() && !item.empty() && (v > 0 || (allow_zero && v == 0)),
          option + " takes a comma-separated list of " + (allow_zero ? "non-negative" : "positive") +
              " integers, got '" + text + "'");
    values.push_back(v);
  }
  check(!values.empty(), option + " is empty");
  return values;
}

}  // namespace octet
