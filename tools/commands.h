// Each `octet` subcommand lives in its own file and registers its options and
// action on the root CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

namespace octet {

// Where a command prints its human-readable report: standard error when
// `--json -` puts the JSON on standard output, so scripts can parse it.
inline std::FILE* report_stream(const std::string& json_path) { return json_path == "-" ? stderr : stdout; }

// What a build without LibTorch says when asked to train.
constexpr const char* kTrainingNeedsTorch =
    "training needs LibTorch, and this octet was built without it: install it (Debian: apt-get install "
    "libtorch-dev) and build again (tools/setup.sh build), or start from a checkpoint made elsewhere";

void add_train_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_summary_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_pipeline_command(CLI::App& app);
void add_hist_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_forecast_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_export_command(CLI::App& app);
// Subcommands of `octet bench`, each in its own file.
void add_bench_data_command(CLI::App& bench);
void add_bench_train_command(CLI::App& bench);

}  // namespace octet
