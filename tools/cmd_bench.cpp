// `octet bench`: speed benchmarks that print numbers (the project keeps speed
// targets out of the tests). This file holds `bench infer`: the int8 runtimes
// against the float peers (bench/float_peers.h) on the same network, in
// the same run, with every row's speed-up; the other subcommands have files
// of their own.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/file_io.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/pipeline.h"
#include "runtime/cpu/engine.h"
#include "runtime/engine.h"
#include "bench/float_peers.h"
#include "bench/layer_timing.h"
#include "bench/timing.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#ifdef OCTET_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_engine.h"
#endif

namespace octet {

namespace {

struct InferCommand {
  std::string checkpoint, quantized, data, backend = "all", batches = "1,32,256,1024", cpu_kernels, json;
  int iterations = 20, warmup = 3, threads = 0;
  bool layers = false;
};

std::vector<float> random_inputs(int64_t count, const ActShape& shape) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> out(static_cast<size_t>(count * shape.numel()));
  for (float& v : out) v = std::clamp(pixel(rng), -2.5f, 2.5f);
  return out;
}

// The achieved TOPS of the convolutions with the most multiply-adds: one
// line (the best and the worst when several tie) and a JSON entry for each.
void report_largest_convs(std::FILE* out, const std::string& backend, int64_t batch,
                          const std::vector<LayerTiming>& layers, nlohmann::json& entries) {
  const std::vector<LayerTiming> largest = largest_convs(layers);
  if (largest.empty()) return;
  const auto [worst, best] = std::minmax_element(
      largest.begin(), largest.end(), [](const LayerTiming& a, const LayerTiming& b) { return tops(a) < tops(b); });
  const long long images = batch;
  if (largest.size() == 1)
    std::fprintf(out, "  %s batch %lld: largest conv %s, %.1f MMACs in %.3f ms: %.2f int8 TOPS\n", backend.c_str(),
                 images, best->name.c_str(), best->macs / 1e6, best->milliseconds, tops(*best));
  else
    std::fprintf(out,
                 "  %s batch %lld: largest convs, %zu of %.1f MMACs each: %.2f int8 TOPS at best (%s, %.3f ms), "
                 "%.2f at worst (%s, %.3f ms)\n",
                 backend.c_str(), images, largest.size(), best->macs / 1e6, tops(*best), best->name.c_str(),
                 best->milliseconds, tops(*worst), worst->name.c_str(), worst->milliseconds);
  for (const LayerTiming& l : largest)
    entries.push_back({{"batch", batch},
                       {"backend", backend},
                       {"node", l.name},
                       {"macs", l.macs},
                       {"milliseconds", l.milliseconds},
                       {"tops", tops(l)}});
}

// The backends of --backend: a comma-separated list, or "all" (those this machine can run).
std::vector<std::string> requested_backends(const std::string& list) {
  const std::vector<std::string> known = engine_backends();
  std::vector<std::string> out;
  if (list == "all") {
    for (const std::string& b : known) {
#ifdef OCTET_HAVE_CUDA
      std::string why;
      if (b != "cpu" && !CudaEngine::device_available(&why)) {
        std::fprintf(stderr, "skipping %s: %s\n", b.c_str(), why.c_str());
        continue;
      }
#endif
      out.push_back(b);
    }
    return out;
  }
  std::stringstream in(list);
  std::string backend;
  while (std::getline(in, backend, ',')) {
    check(std::find(known.begin(), known.end(), backend) != known.end(),
          "--backend " + backend + " is not one this octet has (" + [&] {
            std::string names;
            for (const std::string& b : known) names += b + ", ";
            return names + "all)";
          }());
#ifdef OCTET_HAVE_CUDA
    std::string why;
    const bool usable = backend == "cpu" || CudaEngine::device_available(&why);
    check(usable, "--backend " + backend + ": " + why);
#endif
    out.push_back(backend);
  }
  check(!out.empty(), "--backend is empty");
  return out;
}

// The CPU kernel paths to measure: --cpu-kernels, or the one in use.
std::vector<cpu::KernelPath> cpu_kernel_paths(const std::string& list) {
  if (list.empty()) return {cpu::kernel_path()};
  std::vector<cpu::KernelPath> paths;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    try {
      paths.push_back(cpu::kernel_path_from_name(name));
    } catch (const Error& e) {
      fail(std::string("--cpu-kernels: ") + e.what());
    }
  }
  return paths;
}

#ifdef OCTET_HAVE_CUDA
// cuda-imma's tile per conv shape: every candidate's milliseconds, the
// chosen one starred, and what the timing cost the first run.
void print_tile_choices(std::FILE* out, const std::vector<CudaEngine::TileChoice>& choices) {
  std::fprintf(out, "  cuda-imma tile per conv shape (ms of one launch, * chosen; ms the timing took)\n");
  double tuning = 0;
  for (const CudaEngine::TileChoice& c : choices) {
    std::fprintf(out, "  %-34s", c.shape.c_str());
    if (c.trials.empty()) std::fprintf(out, " %s (the only candidate)", c.tile.c_str());
    for (const auto& [tile, ms] : c.trials)
      std::fprintf(out, " %s %.4f%s", tile.c_str(), ms, tile == c.tile ? "*" : "");
    if (!c.trials.empty()) std::fprintf(out, "; timed in %.1f ms", c.tuning_milliseconds);
    std::fprintf(out, "\n");
    tuning += c.tuning_milliseconds;
  }
  std::fprintf(out, "  tile timing: %.1f ms for %zu shapes, added to the first run of their batch sizes\n", tuning,
               choices.size());
}

nlohmann::json tile_choices_json(const std::vector<CudaEngine::TileChoice>& choices) {
  nlohmann::json out = nlohmann::json::array();
  for (const CudaEngine::TileChoice& c : choices) {
    nlohmann::json trials = nlohmann::json::array();  // in the cost model's order
    for (const auto& [tile, ms] : c.trials) trials.push_back({{"tile", tile}, {"milliseconds", ms}});
    out.push_back({{"shape", c.shape}, {"tile", c.tile}, {"trials", trials}, {"tuning_ms", c.tuning_milliseconds}});
  }
  return out;
}
#endif

void run_infer(const InferCommand& c) {
#ifndef OCTET_HAVE_TORCH
  use_torch_helper();  // LibTorch's float baselines
#endif
  std::FILE* out = report_stream(c.json);
  check(c.iterations > 0 && c.warmup >= 0, "--iterations must be positive and --warmup non-negative");
  check(c.threads >= 0, "--threads must be >= 0 (0: all cores)");
  const int threads = c.threads > 0 ? c.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(threads);
  const std::vector<int64_t> batches = parse_positive_list(c.batches, "--batch", false);
  const std::vector<std::string> backends = requested_backends(c.backend);
  const std::vector<cpu::KernelPath> cpu_paths = cpu_kernel_paths(c.cpu_kernels);
  const cpu::KernelPath default_path = cpu::kernel_path();

  const Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  QuantizedModel model;
  if (c.quantized.empty()) {
    std::fprintf(stderr, "quantizing %s (default options; --quantized FILE skips this)\n", c.checkpoint.c_str());
    model = quantize_checkpoint(checkpoint, c.data, QuantizeOptions{}).model;
  } else {
    model = load_quantized_model(c.quantized);
    check_quantized_from(model, "'" + c.quantized + "'", checkpoint, "'" + c.checkpoint + "'");
  }
  const ActShape input_shape = model.graph.shapes()[0];
  const int64_t largest = *std::max_element(batches.begin(), batches.end());
  const std::vector<float> images = random_inputs(largest, input_shape);

  bool cuda_requested = false;
  for (const std::string& b : backends) cuda_requested |= b != "cpu";
  FloatPeers float_peers(checkpoint, threads, cuda_requested);

  std::map<std::string, std::unique_ptr<Engine>> engines;
  for (const std::string& backend : backends) engines[backend] = make_engine(model, backend);
  const CpuEngine layer_engine(model);  // for --layers: the hook sees each node
  const double load = load_average();
  std::fprintf(out, "%s (%s), %d thread%s, CPU kernels %s, median of %d run%s after %d warm-up, load average %.2f\n",
               checkpoint.model.c_str(), checkpoint.dataset.c_str(), threads, threads == 1 ? "" : "s",
               cpu::kernel_path_name(cpu::kernel_path()), c.iterations, c.iterations == 1 ? "" : "s", c.warmup, load);
  // The machine, so that numbers from several machines are never mixed up.
  const std::string cpu = cpu_description();
  std::string gpu;
#ifdef OCTET_HAVE_CUDA
  if (cuda_requested) gpu = CudaEngine::device_description();
#endif
  std::fprintf(out, "CPU: %s\n", cpu.c_str());
  if (!gpu.empty()) std::fprintf(out, "GPU: %s\n", gpu.c_str());
  if (load > 0.5)
    std::fprintf(out, "note: other processes use the CPU; with more threads than idle cores, OpenMP's spin-waiting "
                      "slows octet and LibTorch alike (OMP_WAIT_POLICY=passive or fewer --threads help)\n");
  std::vector<Measurement> results;
  nlohmann::json largest_conv_entries = nlohmann::json::array(), layer_reports = nlohmann::json::array();
  nlohmann::json speedups = nlohmann::json::array();
  for (const int64_t batch : batches) {
    std::vector<Measurement> rows;
    for (const std::string& backend : backends) {
      Engine* engine = engines.at(backend).get();
      if (backend == "cpu") {
        for (const cpu::KernelPath path : cpu_paths) {
          cpu::set_kernel_path(path);
          const std::string name = cpu_paths.size() > 1 ? "cpu/" + std::string(cpu::kernel_path_name(path)) : "cpu";
          rows.push_back({batch, name, "int8", median(time_calls(c.warmup, c.iterations, [&] {
                            engine->run(images.data(), batch);
                          }))});
          if (c.layers) {
            const std::vector<LayerTiming> layers =
                cpu_layer_times(layer_engine, images.data(), batch, c.warmup, c.iterations);
            print_layers(out, name + " int8 per node, batch " + std::to_string(batch), layers);
            report_largest_convs(out, name, batch, layers, largest_conv_entries);
            layer_reports.push_back({{"batch", batch}, {"backend", name}, {"layers", layers_json(layers)}});
          }
        }
        cpu::set_kernel_path(default_path);
        continue;
      }
#ifdef OCTET_HAVE_CUDA
      auto& cuda = dynamic_cast<CudaEngine&>(*engine);
      // The engine's stream does not wait for this copy (cuda_engine.h).
      check(cudaMemcpy(cuda.device_input(batch), images.data(), sizeof(float) * batch * input_shape.numel(),
                       cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaDeviceSynchronize() == cudaSuccess,
            backend + ": copying the input to the device failed");
      rows.push_back({batch, backend, "int8", median(time_calls(c.warmup, c.iterations, [&] {
                        cuda.run_device(batch);
                        cuda.synchronize();
                      }))});
      std::vector<LayerTiming> layers;
      for (const CudaEngine::NodeTiming& t : cuda.profile(batch, c.iterations))
        layers.push_back({t.name, t.op, t.macs, t.milliseconds, t.kernel});
      report_largest_convs(out, backend, batch, layers, largest_conv_entries);
      if (c.layers) {
        print_layers(out, backend + " per node (launched one by one), batch " + std::to_string(batch), layers);
        layer_reports.push_back({{"batch", batch}, {"backend", backend}, {"layers", layers_json(layers)}});
      }
#endif
    }
    const bool cpu_requested = std::find(backends.begin(), backends.end(), "cpu") != backends.end();
    float_peers.measure(images.data(), input_shape, batch, cpu_requested, c.warmup, c.iterations, rows);
    // The table of this batch size, and int8 against float: every row's
    // speed-up over the float peer (LibTorch float16 + CUDA graph on a GPU,
    // else LibTorch float32 on the CPU).
    const Measurement* peer = nullptr;
    for (const Measurement& m : rows)
      if ((m.name == "libtorch-cuda-graph") || (!peer && (m.name == "libtorch-cpu" || m.name == "octet-float-cpu")))
        peer = &m;
    const std::string peer_name = peer ? peer->name + " " + peer->precision : "";
    std::fprintf(out, "batch %lld\n  %-20s %-9s %12s %14s  %s\n", static_cast<long long>(batch), "backend",
                 "precision", "ms/batch", "images/s", peer ? ("x " + peer_name).c_str() : "");
    const Measurement *best_int8 = nullptr, *best_float = nullptr, *cpu_int8 = nullptr, *cpu_float = nullptr;
    for (const Measurement& m : rows) {
      const std::string ratio = peer ? std::to_string(peer->latency_ms / m.latency_ms).substr(0, 5) + "x" : "";
      std::fprintf(out, "  %-20s %-9s %12.4f %14.0f  %s\n", m.name.c_str(), m.precision.c_str(), m.latency_ms,
                   m.images_per_second(), ratio.c_str());
      const bool int8 = m.precision == "int8";
      const Measurement*& best = int8 ? best_int8 : best_float;
      if (!best || m.latency_ms < best->latency_ms) best = &m;
      if (m.name.rfind("cpu", 0) == 0 && (!cpu_int8 || m.latency_ms < cpu_int8->latency_ms)) cpu_int8 = &m;
      if (m.name == "libtorch-cpu" || m.name == "octet-float-cpu") cpu_float = &m;
    }
    nlohmann::json speedup = {{"batch", batch}};
    if (peer) {
      speedup["peer"] = peer_name;
      for (const Measurement& m : rows)
        if (m.precision == "int8") speedup["over_peer"][m.name] = peer->latency_ms / m.latency_ms;
    }
    if (cpu_int8 && cpu_float) {
      for (const Measurement& m : rows)
        if (m.name.rfind("cpu", 0) == 0)
          std::fprintf(out, "  CPU: int8 (%s) is %.2fx %s float32\n", m.name.c_str(),
                       cpu_float->latency_ms / m.latency_ms, cpu_float->name.c_str());
      const double ratio = cpu_float->latency_ms / cpu_int8->latency_ms;
      speedup["cpu_int8_over_cpu_float32"] = ratio;
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
    speedups.push_back(speedup);
    std::fflush(out);
    results.insert(results.end(), rows.begin(), rows.end());
  }
  nlohmann::json imma_tiles = nlohmann::json::array();
#ifdef OCTET_HAVE_CUDA
  if (const auto imma = engines.find("cuda-imma"); imma != engines.end()) {
    const std::vector<CudaEngine::TileChoice> choices = dynamic_cast<CudaEngine&>(*imma->second).imma_tile_choices();
    if (c.layers) print_tile_choices(out, choices);
    imma_tiles = tile_choices_json(choices);
  }
#endif
  if (c.json.empty()) return;
  nlohmann::json measurements = nlohmann::json::array();
  for (const Measurement& m : results)
    measurements.push_back({{"batch", m.batch},
                            {"backend", m.name},
                            {"precision", m.precision},
                            {"latency_ms", m.latency_ms},
                            {"images_per_second", m.images_per_second()}});
  write_text_output(c.json, nlohmann::json({{"checkpoint", c.checkpoint},
                                            {"quantized", c.quantized},
                                            {"model", checkpoint.model},
                                            {"dataset", checkpoint.dataset},
                                            {"cpu", cpu},
                                            {"gpu", gpu.empty() ? nlohmann::json() : nlohmann::json(gpu)},
                                            {"threads", threads},
                                            {"cpu_kernels", cpu::kernel_path_name(cpu::kernel_path())},
                                            {"load_average", load},
                                            {"iterations", c.iterations},
                                            {"warmup", c.warmup},
                                            {"results", measurements},
                                            {"speedups", speedups},
                                            {"largest_conv", largest_conv_entries},
                                            {"layers", layer_reports},
                                            {"imma_tiles", imma_tiles}})
                                    .dump(2) +
                                "\n");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Speed benchmarks: int8 inference against float, data loading, training");
  bench->require_subcommand(1);

  auto* infer = bench->add_subcommand("infer", "Images/s and latency of the int8 backends and LibTorch float");
  auto i = std::make_shared<InferCommand>();
  infer->add_option("--checkpoint", i->checkpoint, "Float checkpoint (octet train)")->required();
  infer->add_option("--quantized", i->quantized, "Quantized model (default: quantize the checkpoint here)");
  infer->add_option("--data", i->data, "Dataset folder for calibration when quantizing here");
  infer->add_option("--backend", i->backend,
                    "Comma-separated: cpu, cuda-imma, cuda-dp4a, cuda-cublaslt; or all (those this machine can "
                    "run). LibTorch float32 on the CPU is measured with cpu")
      ->capture_default_str();
  infer->add_option("--batch", i->batches, "Batch sizes, comma-separated")->capture_default_str();
  infer->add_option("--iterations", i->iterations, "Timed runs per measurement (the median is reported)")
      ->capture_default_str();
  infer->add_option("--warmup", i->warmup, "Untimed runs before each measurement")->capture_default_str();
  infer->add_option("--threads", i->threads, "CPU threads for octet and LibTorch (0: all cores)")
      ->capture_default_str();
  infer->add_option("--cpu-kernels", i->cpu_kernels,
                    "CPU kernel paths to measure, comma-separated: reference, avx512-vnni (default: the one in "
                    "use, the fastest this CPU has unless OCTET_CPU_KERNELS=reference)");
  infer->add_flag("--layers", i->layers,
                  "Also time every node, with achieved TOPS (CPU: from the engine's hook; CUDA: profile()), and "
                  "show the time of each cuda-imma tile candidate per conv shape");
  add_json_option(infer, i->json);
  infer->callback([i] { run_infer(*i); });

  add_bench_data_command(*bench);
  add_bench_train_command(*bench);
}

}  // namespace octet
