#include "bench/train_plan.h"

#include <algorithm>
#include <thread>

#include "bench/timing.h"
#include "common/error.h"

namespace octet {

namespace {

struct Scenario {
  const char* name;
  const char* help;
};

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = {
      {"workers", "lab 2 C3/C4: data-loader workers 0, 1, 2, 4, ... up to --max-workers"},
      {"optimizers", "lab 2 C6: SGD, Nesterov, Adagrad, Adadelta, Adam at lr 0.1 and at each one's usual lr"},
      {"batchnorm", "lab 2 C7: with and without batch norm"},
      {"device", "lab 2 C5: CPU against GPU"},
      {"precision", "lab 2 C8's speed levers in LibTorch: fp32, tf32, amp-fp16, amp-bf16, channels_last, cuda-graph"},
      {"batch-size", "lab 5 Q1/Q4: --batch-sizes with a fixed lr and with linear scaling + gradual warm-up"},
      {"scaling", "lab 5 Q2/Q3: --processes data-parallel ranks (octet launch), weak and strong scaling"},
  };
  return all;
}

PlannedRun run_with(const TrainOptions& base, std::string label, nlohmann::json keys) {
  PlannedRun run;
  run.label = std::move(label);
  run.keys = std::move(keys);
  run.options = base;
  return run;
}

std::vector<PlannedRun> plan_workers(const BenchTrainOptions& o) {
  const int limit = o.max_workers > 0 ? o.max_workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<PlannedRun> runs;
  for (int w = 0; w <= limit; w = w < 2 ? w + 1 : w * 2) {
    PlannedRun run = run_with(o.base, std::to_string(w) + " workers", {{"workers", w}});
    run.options.workers = w;
    runs.push_back(run);
  }
  return runs;
}

std::vector<PlannedRun> plan_optimizers(const BenchTrainOptions& o) {
  // The lab ran all five at lr 0.1; the second table gives each its usual lr.
  const std::vector<std::pair<std::string, double>> usual = {
      {"sgd", 0.1}, {"nesterov", 0.1}, {"adagrad", 0.01}, {"adadelta", 1.0}, {"adam", 1e-3}};
  std::vector<PlannedRun> runs;
  for (const char* group : {"lab lr 0.1", "usual lr"})
    for (const auto& [name, usual_lr] : usual) {
      const double lr = std::string(group) == "usual lr" ? usual_lr : 0.1;
      PlannedRun run = run_with(o.base, name + " lr " + nlohmann::json(lr).dump(),
                                {{"lr setting", group}, {"optimizer", name}, {"lr", lr}});
      run.options.optimizer.name = name;
      run.options.optimizer.lr = lr;
      for (size_t i = 0; i < runs.size(); ++i)
        if (runs[i].options.optimizer.name == name && runs[i].options.optimizer.lr == lr)
          run.same_as = static_cast<int>(i);
      runs.push_back(run);
    }
  return runs;
}

std::vector<PlannedRun> plan_batchnorm(const BenchTrainOptions& o) {
  std::vector<PlannedRun> runs;
  for (const bool bn : {true, false}) {
    PlannedRun run = run_with(o.base, bn ? "with batch norm" : "without batch norm", {{"batch norm", bn ? "yes" : "no"}});
    run.options.batch_norm = bn;
    runs.push_back(run);
  }
  return runs;
}

std::vector<PlannedRun> plan_device(const BenchTrainOptions& o, const DeviceChoice& d) {
  std::vector<PlannedRun> runs;
  for (const char* device : {"cpu", "cuda"}) {
    PlannedRun run = run_with(o.base, device, {{"device", device}});
    run.options.device = device;
    if (std::string(device) == "cuda" && !d.cuda) run.skipped = d.cuda_missing;
    runs.push_back(run);
  }
  return runs;
}

std::vector<PlannedRun> plan_precision(const BenchTrainOptions& o, const DeviceChoice& d) {
  struct Lever {
    const char* name;
    const char* precision;
    bool channels_last, cuda_graph, cuda_only;
  };
  const std::vector<Lever> levers = {{"fp32", "fp32", false, false, false},
                                     {"tf32", "tf32", false, false, true},
                                     {"amp-fp16", "amp-fp16", false, false, true},
                                     {"amp-bf16", "amp-bf16", false, false, false},
                                     {"channels_last", "fp32", true, false, false},
                                     {"cuda-graph", "fp32", false, true, true}};
  std::vector<PlannedRun> runs;
  for (const Lever& lever : levers) {
    PlannedRun run = run_with(o.base, lever.name, {{"lever", lever.name}});
    run.options.precision = lever.precision;
    run.options.channels_last = lever.channels_last;
    run.options.cuda_graph = lever.cuda_graph;
    if (lever.cuda_only && o.base.device != "cuda")
      run.skipped = "needs CUDA: " + (d.cuda ? std::string("this run uses --device cpu") : d.cuda_missing);
    runs.push_back(run);
  }
  return runs;
}

std::vector<PlannedRun> plan_batch_size(const BenchTrainOptions& o) {
  const std::vector<int64_t> sizes = parse_positive_list(o.batch_sizes, "--batch-sizes", false);
  std::vector<PlannedRun> runs;
  for (const char* rule : {"fixed lr", "linear scaling + warm-up"})
    for (const int64_t b : sizes) {
      const bool scaled = std::string(rule) != "fixed lr";
      // Goyal et al. 2017: lr = base x batch / 256, 5 warm-up epochs (at most the run's).
      const double lr = scaled ? o.base.optimizer.lr * static_cast<double>(b) / 256.0 : o.base.optimizer.lr;
      const double warmup = scaled ? std::min(5.0, static_cast<double>(o.base.epochs)) : o.base.warmup_epochs;
      PlannedRun run = run_with(o.base, "batch " + std::to_string(b) + ", " + rule,
                                {{"lr rule", rule}, {"batch", b}, {"lr", lr}, {"warm-up epochs", warmup}});
      run.options.batch_size = static_cast<int>(b);
      run.options.optimizer.lr = lr;
      run.options.warmup_epochs = warmup;
      runs.push_back(run);
    }
  return runs;
}

std::vector<PlannedRun> plan_scaling(const BenchTrainOptions& o, const DeviceChoice& d) {
  const std::vector<int64_t> counts = parse_positive_list(o.processes, "--processes", false);
  check(std::find(counts.begin(), counts.end(), 1) != counts.end(),
        "--processes must include 1: speed-up and efficiency are measured against one process");
  const int batch = o.base.batch_size;
  for (const int64_t p : counts)
    check(batch % p == 0, "--processes " + std::to_string(p) + ": strong scaling splits --batch-size " +
                              std::to_string(batch) + " evenly over the processes, and it does not divide");
  std::vector<PlannedRun> runs;
  for (const char* mode : {"weak", "strong"})
    for (const int64_t p : counts) {
      const bool weak = std::string(mode) == "weak";
      const int per_process = weak ? batch : static_cast<int>(batch / p);
      PlannedRun run = run_with(o.base, std::string(mode) + " scaling, " + std::to_string(p) + (p == 1 ? " process" : " processes"),
                                {{"scaling", mode},
                                 {"processes", p},
                                 {"batch per process", per_process},
                                 {"global batch", per_process * p}});
      run.options.batch_size = per_process;
      run.processes = static_cast<int>(p);
      const bool cuda = o.base.device == "cuda";
      const std::string& missing = cuda ? d.cuda_process_group_missing : d.cpu_process_group_missing;
      if (p > 1 && !missing.empty())
        run.skipped = "needs data-parallel training: " + missing;
      else if (cuda && p > d.cuda_devices)
        run.skipped =
            "needs " + std::to_string(p) + " GPUs (NCCL: one per rank), " + std::to_string(d.cuda_devices) + " visible";
      // One process with the whole batch is the same run in both modes.
      if (!weak && p == 1)
        for (size_t i = 0; i < runs.size(); ++i)
          if (runs[i].processes == 1) run.same_as = static_cast<int>(i);
      runs.push_back(run);
    }
  return runs;
}

}  // namespace

TrainOptions lab_training_defaults() {
  TrainOptions o;
  o.model = "resnet18";
  o.dataset = "cifar10";
  o.epochs = 5;
  o.batch_size = 128;
  o.optimizer = OptimizerOptions{"sgd", 0.1, 0.9, 5e-4};
  o.schedule = "constant";
  return o;
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const Scenario& s : scenarios()) names.push_back(s.name);
  return names;
}

std::string scenario_help() {
  std::string help;
  for (const Scenario& s : scenarios()) help += std::string("\n  ") + s.name + ": " + s.help;
  return help;
}

std::vector<PlannedRun> plan_scenario(const BenchTrainOptions& o, const DeviceChoice& d) {
  check(o.base.epochs > 0, "--epochs must be positive");
  check(o.base.batch_size > 0, "--batch-size must be positive");
  check(o.base.optimizer.lr > 0, "--lr must be positive");
  check(o.max_workers >= 0, "--max-workers must be >= 0 (0: the machine's cores)");
  check(o.port >= 0 && o.port < 65536, "--port must be a TCP port (1-65535, or 0: octet launch picks one)");
  const std::string& s = o.scenario;
  if (s == "workers") return plan_workers(o);
  if (s == "optimizers") return plan_optimizers(o);
  if (s == "batchnorm") return plan_batchnorm(o);
  if (s == "device") return plan_device(o, d);
  if (s == "precision") return plan_precision(o, d);
  if (s == "batch-size") return plan_batch_size(o);
  if (s == "scaling") return plan_scaling(o, d);
  fail("unknown scenario '" + s + "' (known:" + scenario_help() + ")");
}

}  // namespace octet
