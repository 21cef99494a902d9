// `octet bench train SCENARIO`: the course labs' training experiments, one
// command each (tools/bench_train_plan.h lists them). Every run is an
// `octet train` (in this process, or through `octet launch` for scaling); the
// scenario's table is printed and written with a CSV, an SVG plot and a JSON
// summary into --out.
#include <algorithm>
#include <iostream>
#include <thread>

#include "common/error.h"
#include "common/file_io.h"
#include "data/dataset.h"
#include "models/registry.h"
#include "tools/bench_timing.h"
#include "tools/bench_train_launch.h"
#include "tools/bench_train_plan.h"
#include "tools/bench_train_summary.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#ifdef OCTET_HAVE_TORCH
#include <torch/cuda.h>

#include "train/process_group.h"
#include "train/trainer.h"
#endif

namespace octet {

namespace {

#ifdef OCTET_HAVE_TORCH

DeviceChoice this_machine() {
  DeviceChoice d;
  d.cuda = torch::cuda::is_available();
  d.cuda_devices = d.cuda ? static_cast<int>(torch::cuda::device_count()) : 0;
  if (!d.cuda) d.cuda_missing = "LibTorch sees no CUDA GPU (a CPU-only LibTorch, or no GPU on this machine)";
  d.cpu_process_group_missing = process_group_missing("cpu");
  d.cuda_process_group_missing = process_group_missing("cuda");
  return d;
}

// One run's training record, or why there is none.
RunRecord make_run(const BenchTrainOptions& o, const PlannedRun& run, int index) {
  RunRecord record{run, run.skipped.empty() ? "" : "skipped: " + run.skipped, nlohmann::json()};
  if (!run.skipped.empty()) return record;
  try {
    if (run.processes > 0) {
      // A port of its own per run: a rank that lingers cannot block the next rendezvous.
      record.training = launch_training(run.options, run.processes, o.port > 0 ? o.port + index : 0);
    } else {
      const TrainReport report = train(run.options, std::cerr);
      record.training = nlohmann::json::parse(to_json(run.options, report));
    }
  } catch (const std::exception& e) {
    record.status = std::string("failed: ") + e.what();
    std::cerr << "  " << run.label << " failed: " << e.what() << "\n";
  }
  return record;
}

void run_bench_train(BenchTrainOptions o) {
  const DeviceChoice devices = this_machine();
  if (o.base.device == "auto") o.base.device = devices.cuda ? "cuda" : "cpu";
  check(o.base.device == "cpu" || o.base.device == "cuda", "--device must be cpu, cuda or auto");
  check(o.base.device == "cpu" || devices.cuda, "--device cuda: " + devices.cuda_missing);
  find_model(o.base.model);      // fails listing the known models
  dataset_info(o.base.dataset);  // fails listing the known datasets
  check(o.base.train_limit >= 0 && o.base.test_limit >= 0 && o.base.max_steps >= 0,
        "--train-samples, --test-samples and --max-steps must be >= 0");
  const std::vector<PlannedRun> plan = plan_scenario(o, devices);
  // Reading the training split first checks --data before any run, and gives
  // the images per epoch that images/s counts.
  const Dataset train_split =
      load_dataset(o.base.dataset, resolve_data_dir(o.base.dataset, o.base.data_dir), Split::Train);
  const int64_t train_images =
      o.base.train_limit > 0 ? std::min(o.base.train_limit, train_split.size()) : train_split.size();

  const double load_before = load_average();
  std::vector<RunRecord> records;
  for (size_t k = 0; k < plan.size(); ++k) {
    const PlannedRun& run = plan[k];
    std::cerr << "[" << k + 1 << "/" << plan.size() << "] " << o.scenario << ": " << run.label;
    if (run.same_as >= 0) {
      std::cerr << " (the same run as " << plan[static_cast<size_t>(run.same_as)].label << ")\n";
      RunRecord copy = records[static_cast<size_t>(run.same_as)];
      copy.run = run;
      records.push_back(copy);
      continue;
    }
    std::cerr << (run.skipped.empty() ? "" : ": skipped, " + run.skipped) << std::endl;
    records.push_back(make_run(o, run, static_cast<int>(k)));
  }
  const auto failed = std::find_if(records.begin(), records.end(),
                                   [](const RunRecord& r) { return r.status.rfind("failed", 0) == 0; });
  const bool any_ran = std::any_of(records.begin(), records.end(), [](const RunRecord& r) { return r.status.empty(); });
  if (!any_ran) fail(failed != records.end() ? o.scenario + ": no run succeeded; the first " + failed->status
                                             : o.scenario + ": every run is skipped on this machine");

  ResultTable table = summarize_scenario(o, records, train_images);
  const double load_after = load_average();
  table.details["load_average_before"] = load_before;
  table.details["load_average_after"] = load_after;
  table.details["cores"] = std::thread::hardware_concurrency();
  // The load before the runs is the others' (the load after counts the runs themselves).
  if (load_before > 0.5 * std::thread::hardware_concurrency())
    table.notes.push_back("busy machine (load average " + std::to_string(load_before).substr(0, 4) + " before, " +
                          std::to_string(load_after).substr(0, 4) + " after, " +
                          std::to_string(std::thread::hardware_concurrency()) +
                          " cores): other work shared the CPU, timings are only indicative");
  std::vector<std::string> written = write_table_files(table, o.out);
  if (o.scenario == "scaling") {
    const std::string speed = o.out + "/speed.csv";
    write_text_output(speed, step_times_csv(table));
    written.push_back(speed);
  }
  std::cout << table_markdown(table) << std::flush;
  for (const std::string& path : written) std::cerr << "wrote " << path << "\n";
}

#endif

}  // namespace

void add_bench_train_command(CLI::App& bench) {
  auto* cmd = bench.add_subcommand(
      "train", "The course labs' training experiments: a table, CSV, SVG plot and JSON per scenario");
  auto o = std::make_shared<BenchTrainOptions>();
  o->base = lab_training_defaults();
  o->base.device = "auto";
  TrainOptions& t = o->base;
  cmd->add_option("scenario", o->scenario, "What to measure:" + scenario_help())
      ->required()
      ->check(CLI::IsMember(scenario_names()));
  cmd->add_option("--out", o->out, "Folder for SCENARIO.csv, .md, .svg and .json (scaling: also speed.csv)")
      ->capture_default_str();
  cmd->add_option("--model", t.model, "Model name (see `octet summary --list`)")->capture_default_str();
  cmd->add_option("--dataset", t.dataset, "cifar10, fashion-mnist or mnist")->capture_default_str();
  add_data_option(cmd, t.data_dir);
  cmd->add_option("--epochs", t.epochs, "Epochs per run")->capture_default_str();
  cmd->add_option("--batch-size", t.batch_size, "Mini-batch size (scaling: per process in weak, global in strong)")
      ->capture_default_str();
  cmd->add_option("--lr", t.optimizer.lr, "Learning rate (batch-size: the base of the linear scaling rule)")
      ->capture_default_str();
  cmd->add_option("--schedule", t.schedule, "constant, multistep or cosine")->capture_default_str();
  cmd->add_option("--device", t.device, "cpu, cuda, or auto (cuda when LibTorch sees a GPU)")->capture_default_str();
  cmd->add_option("--workers", t.workers, "Data-loader workers (except in the workers scenario)")
      ->capture_default_str();
  cmd->add_option("--threads", t.threads, "LibTorch compute threads (0: all cores)")->capture_default_str();
  cmd->add_option("--seed", t.seed, "Random seed")->capture_default_str();
  cmd->add_option("--max-steps", t.max_steps, "Stop each run after this many steps (0: no limit)");
  cmd->add_option("--train-samples", t.train_limit, "Train on the first N training images only (0: all)");
  cmd->add_option("--test-samples", t.test_limit, "Score on the first N test images only (0: all)");
  cmd->add_option("--max-workers", o->max_workers, "workers: the largest count (0: the machine's cores)");
  cmd->add_option("--batch-sizes", o->batch_sizes, "batch-size: the sizes, comma-separated")->capture_default_str();
  cmd->add_option("--processes", o->processes, "scaling: process counts, comma-separated, including 1")
      ->capture_default_str();
  cmd->add_option("--port", o->port, "scaling: rendezvous port of the first launch, the next runs counting up (default: octet launch picks "
                  "free ports)")
      ->capture_default_str();
  // After the backward pass by default: the communication time is then the whole all-reduce (lab 5 Q3).
  t.allreduce = "after-backward";
  cmd->add_option("--allreduce", t.allreduce,
                  "scaling: after-backward (the full all-reduce time shows) or overlap (buckets all-reduced during "
                  "the backward pass: only the wait shows)")
      ->capture_default_str();
#ifdef OCTET_HAVE_TORCH
  cmd->callback([o] { run_bench_train(*o); });
#else
  // Captures `o` all the same: parsing writes the options into it before the callback runs.
  cmd->callback([o] {
    use_torch_helper();
    fail(kTrainingNeedsTorch);
  });
#endif
}

}  // namespace octet
