// The optimizers of the course labs behind one small interface, so the trainer
// can change the learning rate per step whatever the algorithm. LibTorch's C++
// API has no Adadelta; octet implements it as PyTorch does.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace octet {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void zero_grad() = 0;
  virtual void step() = 0;
  virtual void set_lr(double lr) = 0;
};

struct OptimizerOptions {
  std::string name = "sgd";  // sgd, nesterov, adagrad, adadelta, adam
  double lr = 0.1;
  double momentum = 0.9;  // sgd, nesterov
  double weight_decay = 5e-4;
};

std::vector<std::string> optimizer_names();
std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options, std::vector<torch::Tensor> params);

}  // namespace octet
