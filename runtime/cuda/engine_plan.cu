// The CUDA engine's per-batch-size plans (engine_impl.cuh): each node's
// shape for its kernel, the arena, cuBLASLt's GEMMs and buffers, and the
// cuda-imma tile of each conv, timed on the plan's own buffers.
#include <algorithm>
#include <cmath>

#include "common/env_switch.h"
#include "runtime/cuda/conv2d_dp4a.cuh"
#include "runtime/cuda/conv2d_grouped.cuh"
#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/engine_impl.cuh"
#include "runtime/cuda/linear_dp4a.cuh"
#include "runtime/cuda/op_support.h"

namespace octet {

cuda::igemm::Problem CudaEngine::Impl::imma_problem(int node, int64_t batch) const {
  const cuda::ConvShape s = conv_shape(node, batch);
  cuda::igemm::Problem p;
  p.batch = batch > INT32_MAX ? -1 : static_cast<int>(batch);  // refused by igemm::unsupported
  p.in_h = s.in_h, p.in_w = s.in_w, p.in_stride = s.in_c, p.tap_c = layers[node].tap_channels;
  p.out_h = s.out_h, p.out_w = s.out_w, p.out_c = s.out_c;
  p.kernel = s.kernel, p.stride = s.stride, p.padding = s.padding;
  return p;
}

// Why no cuda-imma tile can run the conv, or "" when one can.
std::string CudaEngine::Impl::imma_unsupported(int node, int64_t batch) const {
  const cuda::igemm::Problem p = imma_problem(node, batch);
  if (!cuda::igemm::tile_candidates(p, imma_resident.data(), multiprocessors).empty()) return "";
  std::string why_not = "no cuda-imma tile configuration can run it:";
  for (int i = 0; i < cuda::igemm::kTileCount; ++i) {
    const std::string why = imma_resident[i] > 0 ? cuda::igemm::unsupported(p, i) : "does not fit the device";
    why_not += std::string(" ") + cuda::igemm::tile_config(i).name + ": " + (why.empty() ? "not chosen" : why) + ";";
  }
  return why_not;
}

std::string CudaEngine::Impl::unsupported(int node, int64_t batch) const {
  if (uses_grouped(node)) {
    cuda::GroupedConvShape s = grouped_shape(node, batch);
    s.pixels = 1;  // the most threads either choice launches
    return cuda::conv2d_grouped_unsupported(s);
  }
  const cuda::ConvShape s = conv_shape(node, batch);
  if (backend == CudaBackend::CublasLt) {
    const std::string why = cuda::why_cublaslt_cannot_run(model, node);
    return why.empty() ? cuda::LtGemm::unsupported(s.out_c, s.rows(), s.depth()) : why;
  }
  if (uses_imma(node)) return imma_unsupported(node, batch);
  if (model.graph.nodes[node].op == Op::Conv2d) return cuda::conv2d_dp4a_unsupported(s);
  return cuda::linear_dp4a_unsupported(s.rows(), s.depth(), s.out_c);
}

cuda::ConvShape CudaEngine::Impl::conv_shape(int node, int64_t batch) const {
  const Node& n = model.graph.nodes[node];
  const ActShape y = shapes[node];
  cuda::ConvShape s;
  s.batch = batch;
  s.out_c = layers[node].out_c;
  if (n.op == Op::Conv2d) {
    const cuda::ConvGeometry c = cuda::conv_geometry(model.graph, shapes, values, node);
    s.in_h = c.in_h, s.in_w = c.in_w, s.in_c = storage(n.inputs[0]).padded_c;
    s.out_h = y.h, s.out_w = y.w;
    s.kernel = c.kernel, s.stride = c.stride, s.padding = c.padding;
  } else {
    s.in_c = static_cast<int>(storage(n.inputs[0]).bytes());  // the whole stored vector, padding included
  }
  return s;
}

std::vector<bool> CudaEngine::Impl::may_run_beside() const {
  std::vector<bool> may(model.graph.nodes.size(), false);
  for (int i = 0; i < output(); ++i)
    may[i] = model.graph.nodes[i].op == Op::Conv2d && i != patch_conv_node &&
             (backend != CudaBackend::CublasLt || uses_grouped(i));
  return may;
}

RequantEpilogue CudaEngine::Impl::epilogue(const Plan& p, int node) const {
  const Node& n = model.graph.nodes[node];
  const DeviceLayer& layer = layers[node];
  RequantEpilogue e;
  e.bias = layer.bias.get();
  e.multiplier = layer.multiplier.get();
  e.shift = layer.shift.get();
  e.relu = n.relu;
  e.zero_point = model.quant[node].zero_point;
  e.bits = model.quant[node].bits;
  if (n.inputs.size() == 2) {
    e.skip = value(p, n.inputs[1]);
    e.skip_multiplier = layer.skip_multiplier.get();
    e.skip_zero_point = model.quant[n.inputs[1]].zero_point;
    e.skip_bits = model.quant[n.inputs[1]].bits;
  }
  if (const int activation = fused_activation(p, node); activation >= 0)
    cuda::add_fused_tables(e, model, shapes, activation, tables[activation].get());
  return e;
}

CudaEngine::Impl::Plan& CudaEngine::Impl::plan(int64_t batch) {
  if (Plan* found = plans.find(batch)) return *found;
  std::unique_ptr<Plan> made = make_plan(batch);
  if (const int64_t* victim = plans.victim()) {
    synchronize();  // its buffers may still be in use
    if (last_run && last_run->batch == *victim) last_run = nullptr;
  }
  return plans.insert(batch, std::move(made));
}

std::unique_ptr<CudaEngine::Impl::Plan> CudaEngine::Impl::make_plan(int64_t batch) {
  check(batch > 0, std::string(backend_name(backend)) + ": batch size must be positive, got " + std::to_string(batch));
  const Graph& g = model.graph;
  const int n_nodes = static_cast<int>(g.nodes.size());
  auto p = std::make_unique<Plan>();
  p->batch = batch;
  p->retains_all = retain;
  if (!retain && side_stream_on) p->streams = cuda::schedule_streams(g, values, may_run_beside());
  p->stream_events = std::make_unique<Events>(2 * p->streams.side_nodes.size(), cudaEventDisableTiming);
  const cuda::ArenaPlan arena = cuda::plan_arena(g, values, batch, retain, p->streams);
  p->offset = arena.offset;

  // cuBLASLt: the largest im2col matrix, then the largest int32 accumulator
  // block, and each layer's GEMM planned for this batch size.
  int64_t patch_bytes = 0, acc_bytes = 0;
  p->gemms.resize(n_nodes);
  p->launches.assign(n_nodes, {});
  p->row_pixels.assign(n_nodes, 1);
  for (int i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    if (n.op != Op::Conv2d && n.op != Op::Linear) continue;
    const std::string at = where(i) + " at batch " + std::to_string(batch);
    const std::string why = unsupported(i, batch);
    check(why.empty(), at + ": the kernel cannot run it: " + why);
    if (backend != CudaBackend::CublasLt || uses_grouped(i)) continue;
    const cuda::ConvShape s = conv_shape(i, batch);
    if (n.op == Op::Conv2d && !s.is_pointwise())
      patch_bytes = std::max(patch_bytes, cuda::round_up(s.rows() * s.depth(), cuda::kBufferAlignment));
    acc_bytes =
        std::max(acc_bytes, cuda::round_up(s.rows() * s.out_c * int64_t(sizeof(int32_t)), cuda::kBufferAlignment));
    try {
      p->gemms[i] = std::make_unique<cuda::LtGemm>(lt.get(), s.out_c, s.rows(), s.depth(), kCublasLtWorkspace);
    } catch (const Error& e) {
      fail(at + ": " + e.what());
    }
  }
  p->acc_offset = patch_bytes;

  const ActShape in = shapes[0];
  p->input = DeviceBuffer<float>(static_cast<size_t>(batch * in.numel()));
  p->logits = DeviceBuffer<int32_t>(static_cast<size_t>(batch * classes()));
  p->arena = DeviceBuffer<int8_t>(static_cast<size_t>(arena.bytes));
  p->scratch = DeviceBuffer<int8_t>(static_cast<size_t>(patch_bytes + acc_bytes));
  for (int i = 0; i < n_nodes; ++i) {  // timed on this plan's buffers
    if (uses_imma(i)) p->launches[i] = tuned_launch(*p, i);
    if (uses_grouped(i)) p->row_pixels[i] = tuned_row_pixels(*p, i);
  }
  p->patch_conv = tuned_patch_conv(*p);
  return p;
}

// The first conv from the float image, or the image quantized into patches
// and the implicit GEMM over them: the faster, as timed here (the same
// sums either way); the latter untimed, and where every value is retained
// (the patches are the image's value). OCTET_PATCH_CONV=1 or 0 forces one.
bool CudaEngine::Impl::tuned_patch_conv(const Plan& p) const {
  if (patch_conv_node < 0 || p.retains_all) return false;
  if (const std::optional<bool> forced = env_switch("OCTET_PATCH_CONV")) return *forced;
  if (!tune_tiles) return false;
  const std::vector<double> ms = fastest_of_rounds({[&] { enqueue_patch_conv(p, stream.get()); },
                                                    [&] {
                                                      enqueue_node(p, patch_conv_input(), stream.get());
                                                      enqueue_weighted(p, patch_conv_node, stream.get());
                                                    }});
  return ms[0] < ms[1];
}

// One output pixel a thread or four (conv2d_grouped_kernel.h), where both can
// run the conv: the faster, as timed here (the same sums either way).
int CudaEngine::Impl::tuned_row_pixels(const Plan& p, int node) const {
  cuda::GroupedConvShape s = grouped_shape(node, p.batch);
  if (!s.rows_possible() || !tune_tiles) return s.default_row_pixels();
  const Node& n = model.graph.nodes[node];
  const auto launch_with = [&](int pixels) {
    return [&, pixels] {
      cuda::GroupedConvShape shape = s;
      shape.pixels = pixels;
      cuda::conv2d_grouped(shape, value(p, n.inputs[0]), layers[node].weights.get(), epilogue(p, node),
                           layer_output(p, node), launching(stream.get()));
    };
  };
  const std::vector<double> ms = fastest_of_rounds({launch_with(1), launch_with(4)});
  return ms[1] < ms[0] ? 4 : 1;
}

cuda::igemm::TileLaunch CudaEngine::Impl::tuned_launch(const Plan& p, int node) {
  using cuda::igemm::TileLaunch;
  const cuda::igemm::Problem problem = imma_problem(node, p.batch);
  const std::vector<TileLaunch> candidates =
      cuda::igemm::tile_candidates(problem, imma_resident.data(), multiprocessors, split_k);
  check(!candidates.empty(), where(node) + " at batch " + std::to_string(p.batch) + ": no tile can run it");
  if (!tune_tiles) return candidates.front();
  return tuner.choose(problem, candidates, [&](const TileLaunch& launch) { return time_imma(p, node, launch); });
}

double CudaEngine::Impl::time_imma(const Plan& p, int node, const cuda::igemm::TileLaunch& launch) const {
  const Node& n = model.graph.nodes[node];
  return time_launches([&] {
    cuda::conv2d_imma(imma_problem(node, p.batch), launch.tile, value(p, n.inputs[0]), stored_input(n.inputs[0]),
                      layers[node].weights.get(), epilogue(p, node), layer_output(p, node), launching(stream.get()),
                      split_of(launch, stream.get()));
  });
}

cuda::igemm::SplitK CudaEngine::Impl::split_of(const cuda::igemm::TileLaunch& launch, cudaStream_t on) const {
  cuda::igemm::SplitK split;
  split.slices = launch.slices;
  if (split.slices == 1) return split;
  const SplitBuffers& buffers = split_buffers[on == side_stream.get() ? 1 : 0];
  split.partials = buffers.partials.get(), split.arrivals = buffers.arrivals.get();
  return split;
}

std::vector<double> CudaEngine::Impl::fastest_of_rounds(const std::vector<std::function<void()>>& launches) const {
  std::vector<double> fastest(launches.size(), INFINITY);
  for (int round = 0; round < cuda::igemm::TileTuner::kRounds; ++round)
    for (size_t i = 0; i < launches.size(); ++i) fastest[i] = std::min(fastest[i], time_launches(launches[i]));
  return fastest;
}

double CudaEngine::Impl::time_launches(const std::function<void()>& launch) const {
  launch();  // loads the kernel; the arena holds any bytes: no branch of the kernels depends on them
  const Events events(2);
  double fastest = INFINITY;
  for (int run = 0; run < kTuningRuns; ++run) {
    CUDA_CHECK(cudaEventRecord(events[0], stream.get()));
    launch();
    CUDA_CHECK(cudaEventRecord(events[1], stream.get()));
    CUDA_CHECK(cudaEventSynchronize(events[1]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events[0], events[1]));
    fastest = std::min(fastest, double(ms));
  }
  return fastest;
}


}  // namespace octet
