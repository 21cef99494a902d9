// --cuda-graph: the training step captured in a CUDA graph and replayed, as
// PyTorch's whole-network capture does (torch.cuda.graph with a capturable
// optimizer). The first steps run eagerly, so that cuDNN's algorithm search
// and the allocator's first blocks happen outside the capture; the next full
// batch is captured, and every later one copied into the graph's input tensors
// and replayed. A smaller batch (an epoch's last) runs eagerly on the same
// parameters. All of it runs on one side stream, as capture needs.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>

namespace octet {

class CapturedStep {
 public:
  // What one step does, from a batch on the device to its totals tensor (on
  // the device); it must read nothing else the host changes between steps.
  using Body = std::function<torch::Tensor(const torch::Tensor& images, const torch::Tensor& labels)>;

  // Fails where LibTorch was built without CUDA.
  CapturedStep(Body body, const torch::Device& device, int64_t batch_size, bool channels_last);
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;

  // Runs `set_lr` (which writes the rate into a device tensor) and the step on
  // the side stream, for a batch on the host; returns the totals on the host.
  torch::Tensor run(const std::function<void()>& set_lr, const torch::Tensor& images, const torch::Tensor& labels);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace octet
