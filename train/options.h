// The trainer's options, without LibTorch: the command line registers them in
// every build, and a build without LibTorch can say what `octet train` needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

struct OptimizerOptions {
  std::string name = "sgd";  // sgd, nesterov, adagrad, adadelta, adam
  double lr = 0.1;
  double momentum = 0.9;  // sgd, nesterov
  double weight_decay = 5e-4;
};

struct TrainOptions {
  std::string model = "lenet5";
  std::string dataset = "fashion-mnist";
  std::string data_dir;  // empty: the dataset's default folder
  int epochs = 10;
  int batch_size = 128;
  OptimizerOptions optimizer;
  std::string schedule = "cosine";  // constant, multistep, cosine
  std::vector<double> milestones = {0.5, 0.75};  // multistep: fractions of the run, lr x 0.1 at each
  double warmup_epochs = 0;                      // linear warm-up from lr/10
  bool batch_norm = true;
  bool augment = true;  // CIFAR-10 only: random crop + flip
  std::string device = "cpu";
  // Speed levers of `bench train precision`: fp32, tf32 (CUDA), amp-fp16 (CUDA, with loss
  // scaling), amp-bf16; the model in channels_last; the CUDA training step as a CUDA graph.
  std::string precision = "fp32";
  bool channels_last = false;
  bool cuda_graph = false;
  // Data-parallel training (when torchrun's RANK and WORLD_SIZE are set): gradients
  // all-reduced in buckets during the backward pass ("overlap") or after it
  // ("after-backward"); seconds a collective waits for the other ranks.
  std::string allreduce = "overlap";
  double bucket_mb = 25;
  int dist_timeout = 120;
  int workers = 0;
  int threads = 0;  // 0: all cores
  uint64_t seed = 1;
  bool drop_last = false;
  int64_t train_limit = 0;  // use only the first N training samples (0: all)
  int64_t test_limit = 0;   // score only the first N test samples (0: all)
  int64_t max_steps = 0;    // stop after N optimizer steps in total (0: no limit)
  std::string checkpoint;   // written after every epoch (atomically)
  // Continue an interrupted run from a checkpoint this trainer wrote: weights,
  // finished epochs and their statistics are taken from it. Optimizer state
  // (momentum, Adam moments) is not stored in checkpoints and restarts at zero.
  std::string resume;
  // Start from the weights of a checkpoint (same model, dataset and batch-norm
  // flag) with this run's own schedule: fine-tuning or a warm restart. Resuming
  // such a run repeats its --init, which is then only checked.
  std::string init;
  std::string step_log;     // CSV epoch,step,loss,acc
  std::string json;         // all results as JSON ("-" for standard output)
};

}  // namespace octet
