// Launching the CUDA engine's nodes (engine_impl.cuh): conv and linear by
// the backend's GEMM path, the other operators through op_launchers.cuh, the
// network's tail in one kernel; the nodes that run beside the main stream
// on the side stream (stream_schedule.h); and the CUDA graph of a plan,
// captured on its second run and replayed after.
#include "runtime/cuda/conv2d_dp4a.cuh"
#include "runtime/cuda/conv2d_grouped.cuh"
#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/engine_impl.cuh"
#include "runtime/cuda/epilogue.cuh"
#include "runtime/cuda/im2col.cuh"
#include "runtime/cuda/linear_dp4a.cuh"
#include "runtime/cuda/op_launchers.cuh"
#include "runtime/cuda/patch_conv.cuh"
#include "runtime/cuda/pool_linear.cuh"

namespace octet {

void CudaEngine::Impl::enqueue_tail(const Plan& p, cudaStream_t on) const {
  const int pool = tail_pool, x = model.graph.nodes[pool].inputs[0];
  const ActShape in = shapes[x];
  const NodeQuant& q = model.quant[pool];
  const DeviceLayer& layer = layers[output()];
  cuda::global_avg_pool_logits(value(p, x), p.batch, in.h, in.w, storage(x).padded_c, q.multiplier.data[0],
                               q.shift.data[0], model.quant[x].zero_point, q.zero_point, layer.weights.get(),
                               classes(), layer.bias.get(), p.logits.get(), launching(on));
}

cuda::PatchConvShape CudaEngine::Impl::patch_conv_shape(int64_t batch) const {
  cuda::PatchConvShape s;
  s.input = storage(patch_conv_input()).fold.patch_input(batch);
  const cuda::igemm::Problem problem = imma_problem(patch_conv_node, batch);
  s.out_c = problem.out_c, s.row_bytes = problem.packed_depth();
  return s;
}

void CudaEngine::Impl::enqueue_patch_conv(const Plan& p, cudaStream_t on) const {
  cuda::patch_conv(patch_conv_shape(p.batch), p.input.get(), model.quant[patch_conv_input()].scale,
                   layers[patch_conv_node].weights.get(), epilogue(p, patch_conv_node),
                   layer_output(p, patch_conv_node), on);
}

void CudaEngine::Impl::enqueue_weighted(const Plan& p, int node, cudaStream_t on) const {
  if (runs_patch_conv(p, node)) return enqueue_patch_conv(p, on);
  const Node& n = model.graph.nodes[node];
  const DeviceLayer& layer = layers[node];
  if (uses_grouped(node)) {
    cuda::conv2d_grouped(grouped_shape(p, node), value(p, n.inputs[0]), layer.weights.get(), epilogue(p, node),
                         layer_output(p, node), launching(on));
    return;
  }
  const cuda::ConvShape s = conv_shape(node, p.batch);
  const int8_t* x = value(p, n.inputs[0]);
  const bool unsigned_x = stored_unsigned(n.inputs[0]);
  const bool is_output = node == output();
  if (is_output && fused_pool(p) >= 0) return enqueue_tail(p, on);
  if (uses_imma(node)) {
    const cuda::igemm::TileLaunch& launch = p.launches[node];
    cuda::conv2d_imma(imma_problem(node, p.batch), launch.tile, x, stored_input(n.inputs[0]), layer.weights.get(),
                      epilogue(p, node), layer_output(p, node), launching(on), split_of(launch, on));
    return;
  }
  if (backend != CudaBackend::CublasLt) {  // dp4a; imma's linear layers too
    if (is_output)
      cuda::linear_dp4a_logits(x, unsigned_x, layer.weights.get(), s.rows(), s.depth(), classes(), layer.bias.get(),
                               p.logits.get(), launching(on));
    else if (n.op == Op::Linear)
      cuda::linear_dp4a(x, unsigned_x, layer.weights.get(), s.rows(), s.depth(), s.out_c, epilogue(p, node),
                        layer_output(p, node), launching(on));
    else
      cuda::conv2d_dp4a(s, x, unsigned_x, layer.weights.get(), epilogue(p, node), layer_output(p, node), launching(on));
    return;
  }
  const int8_t* patches = x;  // a linear's or pointwise conv's input rows are its patches
  if (n.op == Op::Conv2d && !s.is_pointwise()) {
    cuda::im2col(s, x, p.scratch.get(), launching(on));
    patches = p.scratch.get();
  }
  int32_t* acc = reinterpret_cast<int32_t*>(p.scratch.get() + p.acc_offset);
  p.gemms[node]->run(layer.weights.get(), patches, acc, lt_workspace.get(), on);  // cuBLASLt's, launched plainly
  if (is_output)
    cuda::logits_from_accumulators(acc, s.rows(), s.out_c, classes(), layer.bias.get(), p.logits.get(), launching(on));
  else
    cuda::requantize_accumulators(acc, s.rows(), s.out_c, epilogue(p, node), layer_output(p, node), launching(on));
}

void CudaEngine::Impl::enqueue_node(const Plan& p, int node, cudaStream_t on) const {
  const Node& n = model.graph.nodes[node];
  if (op_traits(n.op).weighted) return enqueue_weighted(p, node, on);
  if (node == fused_pool(p)) return;  // computed with the logits
  if (computed_by_layer(p, node) || read_by_patch_conv(p, node)) return;
  const cuda::OpLauncher launch = cuda::launcher(n.op);
  check(launch != nullptr, where(node) + ": no launcher for its operator");
  cuda::NodeLaunch args{n,
                        model.quant[node],
                        p.batch,
                        p.input.get(),
                        {},
                        {},
                        {},
                        {},
                        {},
                        n.op == Op::Flatten ? nullptr : value(p, node),
                        shapes[node],
                        storage(node).padded_c,
                        storage(node).bytes(),
                        launching(on),
                        tables[node].get(),
                        storage(node).fold};
  args.multipliers = multipliers[node].get();
  for (const int in : n.inputs) {
    args.inputs.push_back(value(p, in));
    args.in_shapes.push_back(shapes[in]);
    args.inputs_c.push_back(storage(in).padded_c);
    args.in_zero_points.push_back(model.quant[in].zero_point);
    args.in_scales.push_back(model.quant[in].scale);
  }
  launch(args);
}

void CudaEngine::Impl::enqueue_network(const Plan& p) const {
  const cuda::StreamSchedule& streams = p.streams;
  for (int i = 0; i <= output(); ++i) {
    for (size_t k = 0; k < streams.side_nodes.size(); ++k) {
      const int side = streams.side_nodes[k];
      const cudaEvent_t fork = (*p.stream_events)[2 * k], join = (*p.stream_events)[2 * k + 1];
      if (streams.fork[side] == i) {
        CUDA_CHECK(cudaEventRecord(fork, stream.get()));
        CUDA_CHECK(cudaStreamWaitEvent(side_stream.get(), fork, 0));
        enqueue_node(p, side, side_stream.get());
        CUDA_CHECK(cudaEventRecord(join, side_stream.get()));
      }
      if (streams.join[side] == i) CUDA_CHECK(cudaStreamWaitEvent(stream.get(), join, 0));
    }
    if (!streams.beside(i)) enqueue_node(p, i, stream.get());
  }
}

void CudaEngine::Impl::launch(Plan& p) {
  last_run = &p;
  if (p.runs++ == 0) {
    enqueue_network(p);
    return;
  }
  if (!p.graph) {
    CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    try {
      enqueue_network(p);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream.get(), &broken);  // leaves the stream usable
      cudaGetLastError();  // the invalidated capture's error, which the next launch check would report
      GraphOwner discard(broken);
      throw;
    }
    cudaGraph_t captured = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream.get(), &captured));
    const GraphOwner graph(captured);
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, captured, 0));
    p.graph.reset(exec);
  }
  CUDA_CHECK(cudaGraphLaunch(p.graph.get(), stream.get()));
}

double CudaEngine::Impl::macs(int node, int64_t batch) const {
  return double(batch) * op_macs(model.graph.nodes[node], shapes, node);
}


}  // namespace octet
