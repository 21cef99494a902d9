// `octet`: one binary, one subcommand per step of the pipeline.
#include <cstdio>
#include <new>

#include "common/error.h"
#include "common/memory_policy.h"
#include "tools/commands.h"
#include "tools/torch_helper.h"

int main(int argc, char** argv) {
  octet::keep_freed_memory_for_reuse();
  octet::remember_command_line(argv);
  CLI::App app{"octet: int8 quantization toolkit and int8 inference runtime for convolutional networks"};
  app.set_version_flag("--version", "octet " OCTET_VERSION);
  app.require_subcommand(1);
  octet::add_train_command(app);
  octet::add_launch_command(app);
  octet::add_summary_command(app);
  octet::add_quantize_command(app);
  octet::add_eval_command(app);
  octet::add_pipeline_command(app);
  octet::add_hist_command(app);
  octet::add_report_command(app);
  octet::add_predict_command(app);
  octet::add_forecast_command(app);
  octet::add_bench_command(app);
  octet::add_import_command(app);
  octet::add_export_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const octet::GoalNotMet& e) {
    std::fprintf(stderr, "octet: goal not met: %s\n", e.what());
    return 3;
  } catch (const octet::Error& e) {
    std::fprintf(stderr, "octet: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "octet: error: out of memory: a buffer could not be allocated (a smaller --batch needs less)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "octet: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
