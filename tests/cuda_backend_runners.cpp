// The CUDA backends in the operator harness: every node retained and read
// back, then the logits of three runs with the buffer-reusing memory plan
// (kernels launched one by one, captured into a CUDA graph, replayed).
#include "runtime/cuda/cuda_engine.h"
#include "runtime/cuda/op_support.h"
#include "tests/backend_runners.h"

namespace octet {

std::vector<BackendRunner> cuda_backend_runners() {
  std::vector<BackendRunner> runners;
  for (CudaBackend backend : {CudaBackend::Imma, CudaBackend::Dp4a, CudaBackend::CublasLt})
    runners.push_back({cuda_backend_name(backend), 0,
                       [] {
                         std::string why_not;
                         return CudaEngine::device_available(&why_not) ? std::string() : "no CUDA device: " + why_not;
                       },
                       [](const QuantizedModel& model) { return cuda::why_graph_unsupported(model.graph); },
                       [backend](const QuantizedModel& model, const std::vector<float>& images, int64_t batch) {
                         CudaEngine gpu(model, backend);
                         gpu.retain_node_outputs(true);
                         BackendOutputs out;
                         out.logits.emplace_back("", gpu.run(images.data(), batch));
                         out.values.resize(model.graph.nodes.size());
                         for (int i = 0; i < model.output(); ++i) out.values[i] = gpu.node_output(i);
                         gpu.retain_node_outputs(false);
                         for (int run = 0; run < 3; ++run)
                           out.logits.emplace_back("with buffer reuse, run " + std::to_string(run),
                                                   gpu.run(images.data(), batch));
                         return out;
                       }});
  return runners;
}

}  // namespace octet
