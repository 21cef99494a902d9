// `octet bench train SCENARIO`: the course labs' training experiments, one
// command each (bench/train_plan.h lists them; bench/train_scenario.h runs
// them with LibTorch).
#include <memory>

#include "bench/train_plan.h"
#include "bench/train_scenario.h"
#include "common/error.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"

namespace octet {

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
  cmd->callback([o] { run_train_scenario(*o); });
#else
  // Captures `o` all the same: parsing writes the options into it before the callback runs.
  cmd->callback([o] {
    use_torch_helper();
    fail(kTrainingNeedsTorch);
  });
#endif
}

}  // namespace octet
