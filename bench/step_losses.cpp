#include "bench/step_losses.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace octet {

std::vector<StepLoss> parse_step_losses(const std::string& csv, const nlohmann::json& training,
                                        const std::string& path) {
  // Steps before each epoch and in it, epochs counted from 1.
  std::vector<double> before = {0}, in_epoch = {0};
  for (const nlohmann::json& e : training.at("epochs")) {
    in_epoch.push_back(e.at("steps").get<double>());
    before.push_back(before.back() + in_epoch.back());
  }
  std::istringstream in(csv);
  std::string line;
  check(std::getline(in, line) && line == "epoch,step,loss,acc",
        path + ": not a step log (its first line is not epoch,step,loss,acc)");
  std::vector<StepLoss> steps;
  for (int number = 2; std::getline(in, line); ++number) {
    const char* p = line.c_str();
    char* end = nullptr;
    const long epoch = std::strtol(p, &end, 10);
    const bool epoch_ok = *end == ',' && epoch >= 1 && static_cast<size_t>(epoch) < in_epoch.size();
    const double step = epoch_ok ? std::strtod(end + 1, &end) : 0;
    const double loss = epoch_ok && *end == ',' ? std::strtod(end + 1, &end) : 0;
    check(epoch_ok && *end == ',' && in_epoch[epoch] > 0,
          path + ":" + std::to_string(number) + ": not epoch,step,loss,acc of an epoch the run recorded: '" + line + "'");
    steps.push_back({static_cast<double>(epoch - 1) + (step - before[epoch - 1]) / in_epoch[epoch], loss});
  }
  return steps;
}

std::vector<StepLoss> read_step_losses(const std::string& path, const nlohmann::json& training) {
  std::ifstream in(path);
  check(in.good(), "cannot read step log '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_step_losses(text.str(), training, path);
}

std::vector<StepLoss> window_means(const std::vector<StepLoss>& steps, size_t points) {
  const size_t window = std::max<size_t>(1, steps.size() / std::max<size_t>(1, points));
  std::vector<StepLoss> means;
  for (size_t first = 0; first < steps.size(); first += window) {
    const size_t last = std::min(steps.size(), first + window);
    double epochs = 0, loss = 0;
    for (size_t i = first; i < last; ++i) epochs += steps[i].epochs, loss += steps[i].loss;
    const double n = static_cast<double>(last - first);
    means.push_back({epochs / n, loss / n});
  }
  return means;
}

}  // namespace octet
