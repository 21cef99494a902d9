// The optimizers of the course labs behind one small interface, so the trainer
// can change the learning rate per step whatever the algorithm. LibTorch's C++
// API has no Adadelta; octet implements it as PyTorch does.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "train/options.h"

namespace octet {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void zero_grad() = 0;
  virtual void step() = 0;
  virtual void set_lr(double lr) = 0;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options, std::vector<torch::Tensor> params);

// SGD or Nesterov (refuses the others, naming them) with the learning rate in
// a tensor on the parameters' device, for a step captured in a CUDA graph:
// each replay reads the rate set_lr wrote before it, where LibTorch's
// optimizers would replay the rate of the capture. zero_grad zeroes the
// gradients in place, so that they keep the addresses the graph writes.
std::unique_ptr<Optimizer> make_graph_safe_optimizer(const OptimizerOptions& options,
                                                      std::vector<torch::Tensor> params);

}  // namespace octet
