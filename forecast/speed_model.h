// Optimus's speed model for synchronous data-parallel training with w workers
// and p parameter servers: f(p, w) = (t0 M/w + t1 + t2 w/p + t3 w + t4 p)^-1
// steps per unit time, M the global batch. 1/f is linear in t, so measured step
// times give t by non-negative least squares.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace octet {

struct SpeedModel {
  std::array<double, 5> t{};  // t0..t4
  double batch = 128;         // M
  // Fitted from probes that all had p = w: 1/f(w, w) = t0 M/w + (t1 + t2) +
  // (t3 + t4) w, so only t0, t1 + t2 (held in t1) and t3 + t4 (held in t3) are
  // known, and step_time refuses p != w.
  bool p_equals_w = false;
  double step_time(double p, double w) const;
  double speed(double p, double w) const { return 1.0 / step_time(p, w); }
};

// The paper's synchronous coefficients (Peng et al., EuroSys 2018): t = (1.02,
// 2.78, 4.92, 0.00, 0.02), M = 128.
SpeedModel paper_sync_speed_model();

struct StepTimeSample {
  double p = 0, w = 0, seconds = 0;  // seconds per step with p servers, w workers
};

// Needs samples whose (M/w, 1, w/p, w, p) rows span the coefficients (5
// distinct configurations, some with p != w); probes that all have p = w (as
// Optimus's, and as `octet bench train scaling`'s, where every process is both)
// give the reduced model (p_equals_w) from 3 distinct w. Anything else is refused.
SpeedModel fit_speed_model(const std::vector<StepTimeSample>& samples, double batch);

// CSV `p,w,seconds` (one row per measured configuration); errors name the line.
std::vector<StepTimeSample> read_step_times(const std::string& path);

}  // namespace octet
