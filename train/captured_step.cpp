#include "train/captured_step.h"

#include "common/error.h"
#include "train/precision.h"
#ifdef OCTET_TORCH_CUDA  // a LibTorch built with CUDA (train/CMakeLists.txt)
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace octet {

#ifdef OCTET_TORCH_CUDA
namespace {
// PyTorch's examples warm up 3 iterations on the side stream before capturing.
constexpr int64_t kEagerStepsBeforeCapture = 3;
}  // namespace

struct CapturedStep::Impl {
  Body body;
  torch::Device device;
  int64_t batch_size;
  bool channels_last;
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  int64_t eager_steps = 0;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  torch::Tensor images, labels, totals;  // the graph's inputs and output, at fixed addresses
};

CapturedStep::CapturedStep(Body body, const torch::Device& device, int64_t batch_size, bool channels_last)
    : impl_(new Impl{std::move(body), device, batch_size, channels_last}) {
  check(device.is_cuda(), "--cuda-graph needs --device cuda");
  // The side stream does not wait for the default one: the model and optimizer state made there must be ready.
  torch::cuda::synchronize();
}

CapturedStep::~CapturedStep() = default;

torch::Tensor CapturedStep::run(const std::function<void()>& set_lr, const torch::Tensor& images,
                                const torch::Tensor& labels) {
  Impl& s = *impl_;
  const c10::cuda::CUDAStreamGuard guard(s.stream);
  set_lr();
  const bool full_batch = images.size(0) == s.batch_size;
  if (s.graph && full_batch) {
    s.images.copy_(images);
    s.labels.copy_(labels);
    s.graph->replay();
    return s.totals.cpu();
  }
  const torch::Tensor x = input_layout(images.to(s.device), s.channels_last);
  const torch::Tensor y = labels.to(s.device);
  if (!full_batch || s.eager_steps < kEagerStepsBeforeCapture) {
    ++s.eager_steps;
    return s.body(x, y).cpu();
  }
  s.images = x;
  s.labels = y;
  s.stream.synchronize();
  s.graph = std::make_unique<at::cuda::CUDAGraph>();
  s.graph->capture_begin();
  s.totals = s.body(s.images, s.labels);
  s.graph->capture_end();
  s.graph->replay();  // the capture recorded the step; this runs it
  return s.totals.cpu();
}

#else

struct CapturedStep::Impl {};

CapturedStep::CapturedStep(Body, const torch::Device&, int64_t, bool) {
  fail("--cuda-graph needs a LibTorch built with CUDA (this one is CPU-only)");
}

CapturedStep::~CapturedStep() = default;

torch::Tensor CapturedStep::run(const std::function<void()>&, const torch::Tensor&, const torch::Tensor&) {
  fail("--cuda-graph needs a LibTorch built with CUDA");
}
#endif

}  // namespace octet
