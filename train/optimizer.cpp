#include "train/optimizer.h"

#include "common/error.h"

namespace octet {

namespace {

// Zeroes the gradients that exist, keeping their tensors (and addresses).
void zero_grads_in_place(std::vector<torch::Tensor>& params) {
  for (auto& p : params)
    if (p.grad().defined()) p.mutable_grad().zero_();
}

// Wraps a LibTorch optimizer; `Options` is its option type, whose lr is set
// through the param group (the same code works on LibTorch 1.13 and 2.x).
template <typename TorchOptimizer, typename Options>
class TorchBacked : public Optimizer {
 public:
  TorchBacked(std::vector<torch::Tensor> params, Options options) : optimizer_(std::move(params), options) {}
  void zero_grad() override { optimizer_.zero_grad(); }
  void step() override { optimizer_.step(); }
  void set_lr(double lr) override {
    for (auto& group : optimizer_.param_groups()) static_cast<Options&>(group.options()).lr(lr);
  }

 private:
  TorchOptimizer optimizer_;
};

// Adadelta (Zeiler 2012) with PyTorch's defaults: rho 0.9, eps 1e-6.
class Adadelta : public Optimizer {
 public:
  Adadelta(std::vector<torch::Tensor> params, double lr, double weight_decay)
      : params_(std::move(params)), lr_(lr), weight_decay_(weight_decay) {
    for (const auto& p : params_) {
      square_avg_.push_back(torch::zeros_like(p));
      acc_delta_.push_back(torch::zeros_like(p));
    }
  }
  void zero_grad() override { zero_grads_in_place(params_); }
  void set_lr(double lr) override { lr_ = lr; }
  void step() override {
    torch::NoGradGuard no_grad;
    constexpr double rho = 0.9, eps = 1e-6;
    for (size_t i = 0; i < params_.size(); ++i) {
      torch::Tensor& p = params_[i];
      if (!p.grad().defined()) continue;
      torch::Tensor grad = weight_decay_ != 0 ? p.grad() + weight_decay_ * p : p.grad();
      square_avg_[i].mul_(rho).addcmul_(grad, grad, 1 - rho);
      const torch::Tensor delta = (acc_delta_[i] + eps).sqrt_().div_((square_avg_[i] + eps).sqrt_()).mul_(grad);
      acc_delta_[i].mul_(rho).addcmul_(delta, delta, 1 - rho);
      p.add_(delta, -lr_);
    }
  }

 private:
  std::vector<torch::Tensor> params_, square_avg_, acc_delta_;
  double lr_, weight_decay_;
};

// SGD as LibTorch's (weight decay, momentum without dampening, Nesterov), the
// rate a 0-dim tensor. Momentum buffers start at zero instead of at the first
// gradient: 0 x momentum + gradient is that gradient, with no branch on the host.
class TensorLrSgd : public Optimizer {
 public:
  TensorLrSgd(std::vector<torch::Tensor> params, const OptimizerOptions& o)
      : params_(std::move(params)), momentum_(o.momentum), weight_decay_(o.weight_decay),
        nesterov_(o.name == "nesterov") {
    check(!params_.empty(), "the optimizer has no parameters");
    lr_ = torch::full({}, o.lr, params_.front().options());
    if (momentum_ != 0)
      for (const auto& p : params_) momentum_buffers_.push_back(torch::zeros_like(p));
  }
  void zero_grad() override { zero_grads_in_place(params_); }
  void set_lr(double lr) override { lr_.fill_(lr); }
  void step() override {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      torch::Tensor& p = params_[i];
      if (!p.grad().defined()) continue;
      torch::Tensor d_p = weight_decay_ != 0 ? p.grad().add(p, weight_decay_) : p.grad();
      if (momentum_ != 0) {
        torch::Tensor& buffer = momentum_buffers_[i];
        buffer.mul_(momentum_).add_(d_p);
        d_p = nesterov_ ? d_p.add(buffer, momentum_) : buffer;
      }
      p.sub_(d_p * lr_);
    }
  }

 private:
  std::vector<torch::Tensor> params_, momentum_buffers_;
  torch::Tensor lr_;
  double momentum_, weight_decay_;
  bool nesterov_;
};

}  // namespace

std::unique_ptr<Optimizer> make_graph_safe_optimizer(const OptimizerOptions& o, std::vector<torch::Tensor> params) {
  check(o.name == "sgd" || o.name == "nesterov",
        "--cuda-graph needs --optimizer sgd or nesterov (their step reads the learning rate from the device), not '" +
            o.name + "'");
  return std::make_unique<TensorLrSgd>(std::move(params), o);
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<torch::Tensor> params) {
  namespace optim = torch::optim;
  if (o.name == "sgd" || o.name == "nesterov") {
    auto options = optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay).nesterov(o.name == "nesterov");
    return std::make_unique<TorchBacked<optim::SGD, optim::SGDOptions>>(std::move(params), options);
  }
  if (o.name == "adagrad")
    return std::make_unique<TorchBacked<optim::Adagrad, optim::AdagradOptions>>(
        std::move(params), optim::AdagradOptions(o.lr).weight_decay(o.weight_decay));
  if (o.name == "adam")
    return std::make_unique<TorchBacked<optim::Adam, optim::AdamOptions>>(
        std::move(params), optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  if (o.name == "adadelta") return std::make_unique<Adadelta>(std::move(params), o.lr, o.weight_decay);
  fail("unknown optimizer '" + o.name + "' (known: sgd, nesterov, adagrad, adadelta, adam)");
}

}  // namespace octet
