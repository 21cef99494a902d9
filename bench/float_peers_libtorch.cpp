// The float peers with LibTorch (octet-torch): float32 on the CPU; on a GPU,
// float32 and float16 (channels_last) eager and float16 in a CUDA graph.
#include <torch/torch.h>

#include <cstdio>

#include "bench/float_peers.h"
#include "bench/timing.h"
#include "train/graph_net.h"
#ifdef OCTET_TORCH_CUDA  // a LibTorch built with CUDA (bench/CMakeLists.txt)
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace octet {

namespace {
#ifdef OCTET_TORCH_CUDA
// Milliseconds of each timed replay of `net`'s forward on `input` captured
// in a CUDA graph on a side stream (warmed up there first, so cuDNN has
// picked its algorithms before the capture).
std::vector<double> cuda_graph_milliseconds(GraphNet& net, const torch::Tensor& input, int warmup, int iterations) {
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  const c10::cuda::CUDAStreamGuard guard(stream);
  for (int i = 0; i < 3; ++i) net->forward_outputs(input);
  stream.synchronize();
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  const std::vector<torch::Tensor> outputs = net->forward_outputs(input);  // kept alive: the graph writes them
  graph.capture_end();
  return time_calls(warmup, iterations, [&] {
    graph.replay();
    stream.synchronize();
  });
}
#endif
}  // namespace

struct FloatPeers::Impl {
  explicit Impl(const Checkpoint& c) : checkpoint(c), cpu_net(c.graph) {}
  const Checkpoint& checkpoint;
  GraphNet cpu_net;
  bool torch_cuda = false;
  torch::NoGradGuard no_grad;  // for as long as the peers are measured
};

FloatPeers::FloatPeers(const Checkpoint& checkpoint, int threads, bool cuda_requested)
    : impl_(new Impl(checkpoint)) {
  torch::set_num_threads(threads);
  impl_->cpu_net->import_state(checkpoint.params);
  impl_->cpu_net->eval();
  impl_->torch_cuda = cuda_requested && torch::cuda::is_available();
  if (cuda_requested && !impl_->torch_cuda)
    std::fprintf(stderr, "note: this LibTorch has no CUDA, so there is no GPU float baseline\n");
}

void FloatPeers::measure(const float* images, const ActShape& shape, int64_t batch, bool cpu_requested, int warmup,
                         int iterations, std::vector<Measurement>& rows) {
  const torch::Tensor x = torch::from_blob(const_cast<float*>(images), {batch, shape.c, shape.h, shape.w});
  if (cpu_requested)
    rows.push_back(timed_row(batch, "libtorch-cpu", "float32",
                             time_calls(warmup, iterations, [&] { impl_->cpu_net->forward_outputs(x); })));
  if (!impl_->torch_cuda) return;
  torch::globalContext().setBenchmarkCuDNN(true);
  const torch::Tensor on_gpu = x.to(torch::kCUDA).contiguous(torch::MemoryFormat::ChannelsLast);
  for (const auto& [dtype, precision] :
       {std::pair{torch::kFloat32, "float32"}, std::pair{torch::kFloat16, "float16"}}) {
    GraphNet net(impl_->checkpoint.graph);
    net->import_state(impl_->checkpoint.params);
    net->eval();
    net->to(torch::kCUDA, dtype);
    for (const auto& [name, tensor] : net->named_state())
      if (tensor.dim() == 4) tensor.set_data(tensor.contiguous(torch::MemoryFormat::ChannelsLast));
    const torch::Tensor input = on_gpu.to(dtype);
    rows.push_back(timed_row(batch, "libtorch-cuda", precision, time_calls(warmup, iterations, [&] {
                               net->forward_outputs(input);
                               torch::cuda::synchronize();
                             })));
#ifdef OCTET_TORCH_CUDA
    if (dtype == torch::kFloat16)
      rows.push_back(
          timed_row(batch, "libtorch-cuda-graph", precision, cuda_graph_milliseconds(net, input, warmup, iterations)));
#endif
  }
#ifndef OCTET_TORCH_CUDA
  std::fprintf(stderr, "note: this octet was built without LibTorch's CUDA: no CUDA-graph float baseline\n");
#endif
}

FloatPeers::~FloatPeers() = default;

}  // namespace octet
