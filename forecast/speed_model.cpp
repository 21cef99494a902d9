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
  check(!p_equals_w || p == w, "the speed model was fitted from probes with p = w only: it cannot tell the time with " +
                                   std::to_string(p) + " servers and " + std::to_string(w) + " workers");
  return features(p, w, batch) * Eigen::Map<const Eigen::Matrix<double, 5, 1>>(t.data());
}

SpeedModel paper_sync_speed_model() {
  SpeedModel m;
  m.t = {1.02, 2.78, 4.92, 0.00, 0.02};
  m.batch = 128;
  return m;
}

SpeedModel fit_speed_model(const std::vector<StepTimeSample>& samples, double batch) {
  check(samples.size() >= 3, "fitting the speed model needs at least 3 measured (p, w) configurations, has " +
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
  SpeedModel m;
  m.batch = batch;
  bool all_p_equal_w = true;
  for (const auto& s : samples) all_p_equal_w &= s.p == s.w;
  if (all_p_equal_w) {
    // Columns M/w, 1 (t1 + t2: w/p is 1), w (t3 + t4: p is w).
    Eigen::MatrixXd reduced(a.rows(), 3);
    reduced << a.col(0), a.col(1), a.col(3);
    check(Eigen::FullPivLU<Eigen::MatrixXd>(reduced).rank() == 3,
          "the measured configurations all have p = w, which leaves 3 coefficients (t0, t1 + t2, t3 + t4): "
          "measure at least 3 distinct w");
    const Eigen::VectorXd t = nnls(reduced, y);
    m.t = {t(0), t(1), 0, t(2), 0};
    m.p_equals_w = true;
    return m;
  }
  check(Eigen::FullPivLU<Eigen::MatrixXd>(a).rank() == 5,
        "the measured configurations cannot separate the speed model's 5 coefficients: measure at least 5 distinct "
        "(p, w) pairs, some with p != w and with several ratios w/p");
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
