#include "tools/bench_timing.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.h"

namespace octet {

double load_average() {
  double load = 0;
  return getloadavg(&load, 1) == 1 ? load : 0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

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
