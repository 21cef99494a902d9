// Writes one SVG of each chart kind octet draws from data the tests make up,
// for tests/common/svg_in_chromium.sh to render: bench train's loss plot with
// a diverged run (per step, and per epoch as runs without a step log give),
// its workers plot (seconds over decades), and histograms with log and linear
// counts. The forecast plots come from `octet forecast` itself.
//   svg_gallery OUTPUT_DIR
#include <cstdio>

#include "bench/train_summary.h"
#include "common/file_io.h"
#include "common/svg_plot.h"
#include "tests/bench/optimizer_runs.h"

int main(int argc, char** argv) {
  using namespace octet;
  if (argc != 2) {
    std::fprintf(stderr, "usage: svg_gallery OUTPUT_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  make_directories(out);
  write_text_output(out + "/bench_train_optimizers_steps.svg",
                    table_svg(summarize_scenario(optimizers_options(), optimizer_runs(true), 6400)));
  write_text_output(out + "/bench_train_optimizers_epochs.svg",
                    table_svg(summarize_scenario(optimizers_options(), optimizer_runs(false), 6400)));
  SvgSeries data{"data loading", {0, 1, 2, 4}, {41.0, 9.5, 0.6, 0.02}, "#3b6ea5"};
  SvgSeries compute{"compute", {0, 1, 2, 4}, {30.5, 31.0, 31.8, 33.0}, "#c0504d"};
  write_text_output(out + "/bench_train_workers.svg",
                    line_chart_svg("Data-loader workers", {data, compute}, "loader workers", "seconds per epoch"));
  write_text_output(out + "/histogram_log_counts.svg",
                    histogram_svg("conv1 weights", {1, 0, 3, 14, 80, 420, 2600, 9100, 2500, 390, 60, 9, 2, 1}, -0.62,
                                  0.55, "weight value"));
  write_text_output(out + "/histogram_linear_counts.svg",
                    histogram_svg("fc3 output", {40, 95, 160, 210, 180, 120, 60, 30}, 0, 7.3, "activation value"));
  return 0;
}
