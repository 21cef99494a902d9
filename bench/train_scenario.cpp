#include "bench/train_scenario.h"

#include <torch/cuda.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "bench/timing.h"
#include "bench/train_launch.h"
#include "bench/train_summary.h"
#include "common/error.h"
#include "common/file_io.h"
#include "data/dataset.h"
#include "models/registry.h"
#include "train/process_group.h"
#include "train/trainer.h"

namespace octet {

namespace {

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
  RunRecord record{run, run.skipped.empty() ? "" : "skipped: " + run.skipped, nlohmann::json(), {}};
  if (!run.skipped.empty()) return record;
  try {
    if (run.processes > 0) {
      // A port of its own per run: a rank that lingers cannot block the next rendezvous.
      record.training = launch_training(run.options, run.processes, o.port > 0 ? o.port + index : 0);
    } else {
      // Kept beside the table: the loss plots draw every step, not only the epochs' means.
      TrainOptions options = run.options;
      options.step_log = o.out + "/" + o.scenario + "-run" + std::to_string(index + 1) + "-steps.csv";
      make_directories(o.out);
      const TrainReport report = train(options, std::cerr);
      record.training = nlohmann::json::parse(to_json(options, report));
      record.step_losses = read_step_losses(options.step_log, record.training);
    }
  } catch (const std::exception& e) {
    record.status = std::string("failed: ") + e.what();
    std::cerr << "  " << run.label << " failed: " << e.what() << "\n";
  }
  return record;
}

}  // namespace

void run_train_scenario(BenchTrainOptions o) {
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

}  // namespace octet
