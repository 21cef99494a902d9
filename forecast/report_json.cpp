#include "forecast/report_json.h"

#include <cmath>

namespace octet {

nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json params_json(const LossParams& b) { return {{"b0", b.b0}, {"b1", b.b1}, {"b2", b.b2}, {"a", b.a}}; }

nlohmann::json fit_json(const LossFit& f) {
  return {{"b", params_json(f.b)}, {"origin", f.origin}, {"rmse", f.rmse}, {"r2", f.r2}, {"points", f.points}};
}

nlohmann::json band_json(const Band& b) {
  return {{"p10", finite_or_null(b.p10)}, {"p50", finite_or_null(b.p50)}, {"p90", finite_or_null(b.p90)}};
}

}  // namespace octet
