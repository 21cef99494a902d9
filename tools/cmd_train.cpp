// `octet train`: the LibTorch trainer (train/trainer.h). A build without
// LibTorch keeps the command and its options, and says what is missing.
#include <iostream>

#include "common/error.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#include "train/options.h"
#ifdef OCTET_HAVE_TORCH
#include "train/trainer.h"
#endif

namespace octet {

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a float model and write a checkpoint");
  cmd->footer(
      "Data-parallel: run one process per rank with torchrun's variables set (RANK, WORLD_SIZE, LOCAL_RANK, "
      "MASTER_ADDR, MASTER_PORT), by torchrun or `octet launch -n N -- octet train ...`: Gloo on the CPU, NCCL "
      "with --device cuda (one GPU per rank). Rank 0 alone prints and writes files.");
  auto o = std::make_shared<TrainOptions>();
  cmd->add_option("--model", o->model, "Model name (see `octet summary --list`)")->capture_default_str();
  cmd->add_option("--dataset", o->dataset, "cifar10, fashion-mnist or mnist")->capture_default_str();
  add_data_option(cmd, o->data_dir);
  cmd->add_option("--epochs", o->epochs, "Epochs")->capture_default_str();
  cmd->add_option("--batch-size", o->batch_size, "Mini-batch size (per process when data-parallel)")
      ->capture_default_str();
  cmd->add_option("--optimizer", o->optimizer.name, "sgd, nesterov, adagrad, adadelta, adam")->capture_default_str();
  cmd->add_option("--lr", o->optimizer.lr, "Learning rate")->capture_default_str();
  cmd->add_option("--momentum", o->optimizer.momentum, "Momentum (sgd, nesterov)")->capture_default_str();
  cmd->add_option("--weight-decay", o->optimizer.weight_decay, "Weight decay")->capture_default_str();
  cmd->add_option("--schedule", o->schedule, "constant, multistep (x0.1 at --milestones) or cosine")
      ->capture_default_str();
  cmd->add_option("--milestones", o->milestones, "multistep: fractions of the run")->capture_default_str();
  cmd->add_option("--warmup-epochs", o->warmup_epochs, "Linear warm-up from lr/10")->capture_default_str();
  cmd->add_flag("!--no-bn", o->batch_norm, "Remove batch norm from the model");
  cmd->add_flag("!--no-augment", o->augment, "CIFAR-10: no random crop and flip");
  cmd->add_option("--device", o->device, "cpu or cuda")->capture_default_str();
  cmd->add_option("--precision", o->precision,
                  "fp32, tf32 (CUDA), amp-fp16 (CUDA; autocast with dynamic loss scaling) or amp-bf16 (autocast)")
      ->capture_default_str();
  cmd->add_flag("--channels-last", o->channels_last, "Weights and inputs in channels-last (NHWC) layout");
  cmd->add_flag("--cuda-graph", o->cuda_graph,
                "Capture the training step in a CUDA graph and replay it (--device cuda, --optimizer sgd or "
                "nesterov, one process)");
  cmd->add_option("--workers", o->workers, "Data-loader workers (0: load in the training thread)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "LibTorch compute threads (0: all cores)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  cmd->add_option("--allreduce", o->allreduce,
                  "Data-parallel gradients: overlap (buckets all-reduced during the backward pass) or "
                  "after-backward (all at the end: the full all-reduce time shows)")
      ->capture_default_str();
  cmd->add_option("--bucket-mb", o->bucket_mb, "Data-parallel gradient bucket size in MB")->capture_default_str();
  cmd->add_option("--dist-timeout", o->dist_timeout,
                  "Data-parallel: seconds to wait for the other ranks before failing")
      ->capture_default_str();
  cmd->add_flag("--drop-last", o->drop_last, "Drop the last incomplete batch");
  cmd->add_option("--max-steps", o->max_steps, "Stop after this many steps (0: no limit)");
  cmd->add_option("--train-samples", o->train_limit,
                  "Train on the first N training images only (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--test-samples", o->test_limit,
                  "Score each epoch on the first N test images only (0: all 10,000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--checkpoint", o->checkpoint, "Checkpoint to write (after every epoch)");
  cmd->add_option("--resume", o->resume,
                  "Continue an interrupted run from its checkpoint (same options; optimizer state restarts)");
  cmd->add_option("--init", o->init, "Start from a checkpoint's weights with this run's schedule (fine-tuning)");
  cmd->add_option("--step-log", o->step_log, "CSV log of every step: epoch,step,loss,acc");
  add_json_option(cmd, o->json);
#ifdef OCTET_HAVE_TORCH
  cmd->callback([o] { train(*o, o->json == "-" ? std::cerr : std::cout); });
#else
  // Captures `o` all the same: parsing writes the options into it before the callback runs.
  cmd->callback([o] {
    use_torch_helper();
    fail(kTrainingNeedsTorch);
  });
#endif
}

}  // namespace octet
