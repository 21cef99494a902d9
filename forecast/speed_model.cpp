#include "forecast/speed_model.h"

#include <Eigen/Dense>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "forecast/nnls.h"

namespace octet {

namespace {

Eigen::Matrix<double, 1, 5> features(double p, double w, double batch) { return {batch / w, 1.0, w / p, w, p}; }

}  // namespace

double SpeedModel::step_time(double p, double w) const {
  check(p > 0 && w > 0, "the speed model needs p > 0 servers and w > 0 workers");
  return features(p, w, batch) * Eigen::Map<const Eigen::Matrix<double, 5, 1>>(t.data());
}

SpeedModel paper_sync_speed_model() {
  SpeedModel m;
  m.t = {1.02, 2.78, 4.92, 0.00, 0.02};
  m.batch = 128;
  return m;
}

SpeedModel fit_speed_model(const std::vector<StepTimeSample>& samples, double batch) {
  check(samples.size() >= 5, "fitting the speed model needs at least 5 measured (p, w) configurations, has " +
                                 std::to_string(samples.size()));
  Eigen::MatrixXd a(static_cast<Eigen::Index>(samples.size()), 5);
  Eigen::VectorXd y(static_cast<Eigen::Index>(samples.size()));
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    check(s.p > 0 && s.w > 0 && s.seconds > 0 && std::isfinite(s.seconds),
          "step-time sample " + std::to_string(i + 1) + ": p, w and seconds must be positive");
    a.row(static_cast<Eigen::Index>(i)) = features(s.p, s.w, batch);
    y(static_cast<Eigen::Index>(i)) = s.seconds;
  }
  check(Eigen::FullPivLU<Eigen::MatrixXd>(a).rank() == 5,
        "the measured configurations cannot separate the speed model's 5 coefficients (with p = w in every probe, "
        "t2 w/p is a constant like t1): measure some with p != w and at least 5 distinct (p, w) pairs");
  SpeedModel m;
  m.batch = batch;
  const Eigen::VectorXd t = nnls(a, y);
  for (int i = 0; i < 5; ++i) m.t[static_cast<size_t>(i)] = t(i);
  return m;
}

std::vector<StepTimeSample> read_step_times(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), "cannot read step times '" + path + "'");
  std::vector<StepTimeSample> samples;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    const std::string where = path + ":" + std::to_string(number);
    if (number == 1) {
      check(line == "p,w,seconds", where + ": expected the header 'p,w,seconds', found '" + line + "'");
      continue;
    }
    if (line.empty()) continue;
    std::istringstream row(line);
    StepTimeSample s;
    char comma1 = 0, comma2 = 0;
    check(static_cast<bool>(row >> s.p >> comma1 >> s.w >> comma2 >> s.seconds) && comma1 == ',' && comma2 == ',' &&
              (row >> std::ws).eof(),
          where + ": expected 'p,w,seconds' as three numbers, found '" + line + "'");
    check(s.p > 0 && s.w > 0 && s.seconds > 0 && std::isfinite(s.seconds),
          where + ": p, w and seconds must be positive and finite");
    samples.push_back(s);
  }
  check(!samples.empty(), path + ": no step times after the header");
  return samples;
}

}  // namespace octet
