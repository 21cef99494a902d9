// Each `octet` subcommand lives in its own file and registers its options and
// action on the root CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace octet {

void add_train_command(CLI::App& app);
void add_summary_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_pipeline_command(CLI::App& app);

}  // namespace octet
