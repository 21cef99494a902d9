#include "bench/infer_table.h"

#include <string>

#include "bench/onnxruntime_peer.h"
#include "bench/output_runs.h"
#include "common/strings.h"
#include "runtime/engine.h"

namespace octet {

namespace {
bool is_cpu_float(const Measurement& m) { return m.name == "libtorch-cpu" || m.name == "octet-float-cpu"; }
// The CPU backend's rows: "cpu", or "cpu/<kernel path>" when several paths are measured.
bool is_cpu_int8(const Measurement& m) { return m.name.rfind(backend_names::kCpu, 0) == 0; }
// ONNX Runtime's rows: the float model's, and one per int8 export target.
bool is_onnxruntime(const Measurement& m) { return m.name.rfind(kOnnxRuntimeRow, 0) == 0; }
// A backend's runs with the model's outputs arranged and decoded (bench/output_runs.h), as ONNX Runtime's include them.
bool with_outputs(const Measurement& m) { return ends_with(m.name, kWithOutputs); }
}  // namespace

nlohmann::json print_batch_table(std::FILE* out, int64_t batch, const std::vector<Measurement>& rows) {
  // The table of this batch size, and int8 against float: every row's
  // speed-up over the float peer (LibTorch float16 + CUDA graph on a GPU,
  // else LibTorch float32 on the CPU).
  const Measurement* peer = nullptr;
  for (const Measurement& m : rows)
    if (m.name == "libtorch-cuda-graph" || (!peer && is_cpu_float(m))) peer = &m;
  const std::string peer_name = peer ? peer->name + " " + peer->precision : "";
  std::fprintf(out, "batch %lld\n  %-27s %-9s %12s %10s %14s  %s\n", static_cast<long long>(batch), "backend",
               "precision", "ms/batch", "fastest", "images/s", peer ? ("x " + peer_name).c_str() : "");
  const Measurement *best_int8 = nullptr, *best_float = nullptr, *cpu_int8 = nullptr, *cpu_float = nullptr;
  const Measurement* cpu_outputs = nullptr;  // the fastest CPU row with the outputs, where the model arranges them
  for (const Measurement& m : rows) {
    const std::string ratio = peer ? std::to_string(peer->latency_ms / m.latency_ms).substr(0, 5) + "x" : "";
    std::fprintf(out, "  %-27s %-9s %12.4f %10.4f %14.0f  %s\n", m.name.c_str(), m.precision.c_str(), m.latency_ms,
                 m.fastest_ms, m.images_per_second(), ratio.c_str());
    const bool int8 = m.precision == "int8";
    const Measurement*& best = int8 ? best_int8 : best_float;
    if (!best || m.latency_ms < best->latency_ms) best = &m;
    if (is_cpu_int8(m) && !with_outputs(m) && (!cpu_int8 || m.latency_ms < cpu_int8->latency_ms)) cpu_int8 = &m;
    if (is_cpu_int8(m) && with_outputs(m) && (!cpu_outputs || m.latency_ms < cpu_outputs->latency_ms))
      cpu_outputs = &m;
    if (is_cpu_float(m)) cpu_float = &m;
  }
  nlohmann::json speedup = {{"batch", batch}};
  if (peer) {
    speedup["peer"] = peer_name;
    for (const Measurement& m : rows)
      if (m.precision == "int8") speedup["over_peer"][m.name] = peer->latency_ms / m.latency_ms;
  }
  if (cpu_int8 && cpu_float) {
    for (const Measurement& m : rows)
      if (is_cpu_int8(m))
        std::fprintf(out, "  CPU: int8 (%s) is %.2fx %s float32\n", m.name.c_str(),
                     cpu_float->latency_ms / m.latency_ms, cpu_float->name.c_str());
    const double ratio = cpu_float->latency_ms / cpu_int8->latency_ms;
    speedup["cpu_int8_over_cpu_float32"] = ratio;
  }
  // octet's CPU int8 against ONNX Runtime's rows (--onnxruntime), same batch
  // and threads, with the outputs where the model arranges them (ORT's runs
  // include that); and ORT's int8 against its own float32.
  const Measurement* cpu_against_onnxruntime = cpu_outputs ? cpu_outputs : cpu_int8;
  const Measurement* onnxruntime_float = nullptr;
  for (const Measurement& m : rows)
    if (is_onnxruntime(m) && m.precision == "float32") onnxruntime_float = &m;
  for (const Measurement& m : rows) {
    if (!is_onnxruntime(m)) continue;
    if (cpu_against_onnxruntime) {
      const double ratio = m.latency_ms / cpu_against_onnxruntime->latency_ms;
      std::fprintf(out, "  CPU: int8 (%s) is %.2fx %s %s\n", cpu_against_onnxruntime->name.c_str(), ratio,
                   m.name.c_str(), m.precision.c_str());
      speedup["cpu_int8_over_onnxruntime"][m.name + " " + m.precision] = ratio;
      speedup["cpu_int8_against_onnxruntime"] = cpu_against_onnxruntime->name;
    }
    if (onnxruntime_float && m.precision == "int8") {
      const double ratio = onnxruntime_float->latency_ms / m.latency_ms;
      std::fprintf(out, "  ONNX Runtime: int8 (%s) is %.2fx its float32\n", m.name.c_str(), ratio);
      speedup["onnxruntime_int8_over_float32"][m.name] = ratio;
    }
  }
  if (best_int8 && best_float) {
    const double ratio = best_float->latency_ms / best_int8->latency_ms;
    if (best_int8 != cpu_int8 || best_float != cpu_float)  // a GPU row won
      std::fprintf(out, "  best int8 (%s) is %.2fx the best float (%s %s)\n", best_int8->name.c_str(), ratio,
                   best_float->name.c_str(), best_float->precision.c_str());
    speedup["best_int8"] = best_int8->name;
    speedup["best_float"] = best_float->name + " " + best_float->precision;
    speedup["best_int8_over_best_float"] = ratio;
  }
  return speedup;
}

}  // namespace octet
