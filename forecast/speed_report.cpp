#include "forecast/speed_report.h"

#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/svg_plot.h"
#include "forecast/speed_model.h"

namespace octet {

void report_speed(const SpeedRequest& c, std::FILE* out) {
  const bool fitted = !c.step_times.empty();
  const SpeedModel model = fitted ? fit_speed_model(read_step_times(c.step_times), c.batch) : paper_sync_speed_model();
  std::fprintf(out, "speed model f(p, w) = 1 / (t0 M/w + t1 + t2 w/p + t3 w + t4 p), M = %g: t = (%.4g, %.4g, %.4g, %.4g, %.4g)%s\n",
               model.batch, model.t[0], model.t[1], model.t[2], model.t[3], model.t[4],
               fitted ? (" fitted (NNLS) from " + c.step_times).c_str()
                      : " (Optimus's synchronous coefficients; time in their units)");
  // A model fitted from p = w probes only knows p = w: that is its one column.
  const std::vector<double> servers = model.p_equals_w ? std::vector<double>{0} : c.servers;
  if (model.p_equals_w)
    std::fprintf(out, "every probe had p = w: only t0, t1 + t2 (shown as t1) and t3 + t4 (shown as t3) are identifiable, "
                      "and only p = w can be forecast\n");
  std::fprintf(out, "time to target (%.0f steps):\n%8s", c.steps, "workers");
  for (double p : servers)
    if (p > 0) std::fprintf(out, "   p = %-6g", p);
    else std::fprintf(out, "   p = w     ");
  std::fprintf(out, "\n");
  std::vector<SvgSeries> series;
  static const char* colors[] = {"#3b6ea5", "#c0504d", "#4f8f3a", "#8064a2"};
  for (size_t i = 0; i < servers.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, servers[i] > 0 ? "p = %g" : "p = w", servers[i]);
    series.push_back({name, {}, {}, colors[i % 4]});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (int w = 1; w <= c.max_workers; ++w) {
    std::fprintf(out, "%8d", w);
    nlohmann::json row = {{"workers", w}};
    for (size_t i = 0; i < servers.size(); ++i) {
      const double p = servers[i] > 0 ? servers[i] : w;
      const double time = c.steps * model.step_time(p, w);
      std::fprintf(out, "   %-10.4g", time);
      series[i].x.push_back(w);
      series[i].y.push_back(time);
      row[servers[i] > 0 ? "time_p" + std::to_string(static_cast<int>(servers[i])) : std::string("time_p_equals_w")] = time;
    }
    std::fprintf(out, "\n");
    rows.push_back(row);
  }
  if (!c.svg.empty()) {
    write_text_output(c.svg, line_chart_svg("time to target vs workers", series, "workers w", "time to target"));
    std::fprintf(out, "plot: %s\n", c.svg.c_str());
  }
  if (!c.json.empty())
    write_text_output(c.json, nlohmann::json({{"t", model.t}, {"batch", model.batch}, {"fitted", fitted},
                                              {"p_equals_w_only", model.p_equals_w},
                                              {"steps", c.steps}, {"rows", rows}})
                                      .dump(2) +
                                  "\n");
}

}  // namespace octet
