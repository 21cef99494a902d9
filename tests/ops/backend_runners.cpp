#include "tests/ops/backend_runners.h"

#include "runtime/cpu/cpu_engine.h"
#include "runtime/cuda/op_support.h"
#include "runtime/engine.h"
#include "tests/ops/device_layout_executor.h"
#include "tests/ops/reference_int8.h"

namespace octet {

namespace {

// Selects a CPU kernel path and restores the previous one.
class KernelPathScope {
 public:
  explicit KernelPathScope(cpu::KernelPath path) : before_(cpu::kernel_path()) { cpu::set_kernel_path(path); }
  ~KernelPathScope() { cpu::set_kernel_path(before_); }

 private:
  cpu::KernelPath before_;
};

BackendRunner cpu_runner(cpu::KernelPath path) {
  return {std::string("cpu-") + cpu::kernel_path_name(path), 0,
          [path]() -> std::string {
            return cpu::kernel_path_supported(path) ? "" : std::string("this CPU lacks ") + cpu::kernel_path_name(path);
          },
          [](const QuantizedModel&) { return std::string(); },  // the CPU runtime runs every operator
          [path](const QuantizedModel& model, const std::vector<float>& images, int64_t batch) {
            const KernelPathScope scope(path);
            const CpuEngine engine(model);
            BackendOutputs out;
            out.values.resize(model.graph.nodes.size());
            out.logits.emplace_back(
                "", engine.run_outputs(images.data(), batch, [&](int node, const int8_t* v, int64_t count) {
                  out.values[node] = hook_values(model, node, v, count);
                }));
            return out;
          }};
}

// The naive host executor is slow: a few images show every layout bug.
BackendRunner host_layout_runner(bool imma) {
  return {imma ? "host-layout-imma" : "host-layout-dp4a", 3, [] { return std::string(); },
          [imma](const QuantizedModel& model) {
            return cuda::why_model_unsupported_on(imma ? backend_names::kCudaImma : backend_names::kCudaDp4a, model);
          },
          [imma](const QuantizedModel& model, const std::vector<float>& images, int64_t batch) {
            LayoutRun retained = run_in_device_layout(model, images, batch, true, imma);
            BackendOutputs out;
            out.values = std::move(retained.values);
            out.logits.push_back({"", {std::move(retained.logits)}});
            LayoutRun reused = run_in_device_layout(model, images, batch, false, imma);
            out.logits.push_back({"with buffer reuse", {std::move(reused.logits)}});
            return out;
          }};
}

// A backend of the registry (runtime/engine.h): every node read through the
// hook, then the logits of three runs as it runs by default (CUDA: with the
// buffer-reusing plan, launched one by one, captured into a graph, replayed).
BackendRunner registry_runner(const EngineBackend& b) {
  return {b.name, 0, b.why_unavailable, b.why_unsupported,
          [&b](const QuantizedModel& model, const std::vector<float>& images, int64_t batch) {
            const std::unique_ptr<Engine> engine = b.make(model);
            BackendOutputs out;
            out.values.resize(model.graph.nodes.size());
            out.logits.emplace_back(
                "", engine->run_outputs(images.data(), batch, [&](int node, const int8_t* v, int64_t count) {
                  out.values[node] = hook_values(model, node, v, count);
                }));
            for (int run = 0; run < 3; ++run)
              out.logits.emplace_back("with buffer reuse, run " + std::to_string(run),
                                      engine->run_outputs(images.data(), batch));
            return out;
          }};
}

}  // namespace

const std::vector<BackendRunner>& backend_runners() {
  static const std::vector<BackendRunner> runners = [] {
    std::vector<BackendRunner> r = {cpu_runner(cpu::KernelPath::Reference), cpu_runner(cpu::KernelPath::Avx2),
                                    cpu_runner(cpu::KernelPath::Avx512Vnni), host_layout_runner(false),
                                    host_layout_runner(true)};
    for (const EngineBackend& b : engine_backends())  // the CPU's runs above, one per kernel path
      if (std::string(b.name) != backend_names::kCpu) r.push_back(registry_runner(b));
    return r;
  }();
  return runners;
}

}  // namespace octet
