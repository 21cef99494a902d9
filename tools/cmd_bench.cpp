// `octet bench`: speed benchmarks that print numbers (the project keeps speed
// targets out of the tests). This file holds `bench infer`: the int8 runtimes
// against the float peers (bench/float_peers.h) on the same network, in
// the same run, with every row's speed-up; the other subcommands have files
// of their own.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/file_io.h"
#include "common/memory_budget.h"
#include "qmodel/checkpoint_identity.h"
#include "qmodel/precision.h"
#include "quant/pipeline.h"
#include "bench/float_peers.h"
#include "bench/infer_table.h"
#include "bench/layer_timing.h"
#include "bench/onnxruntime_peer.h"
#include "bench/output_runs.h"
#include "bench/timing.h"
#include "graph/output_view.h"
#ifdef OCTET_HAVE_ONNX
#include "interop/onnx_export.h"
#endif
#include "runtime/cpu/idle_threads.h"
#include "runtime/cpu/kernels.h"
#include "runtime/engine.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"

namespace octet {

namespace {

struct InferCommand {
  std::string checkpoint, quantized, backend = "all", batches = "1,32,256,1024", cpu_kernels, json, onnx;
  DataArgs data;
  int iterations = 20, warmup = 3, threads = 0;
  bool layers = false, onnxruntime = false;
};

// --onnxruntime: octet's QDQ exports of the measured model (int8, each
// target) and --onnx (float32), timed by ORT.
void add_onnxruntime_models(const InferCommand& c, const QuantizedModel& model, OnnxRuntimePeer& peer) {
  if (!c.onnx.empty()) {
    check(file_exists(c.onnx), "--onnx " + c.onnx + ": no such file");
    peer.add_model({c.onnx, "float32", "the float model", ""});
  }
#ifdef OCTET_HAVE_ONNX
  for (const OnnxTarget target : {OnnxTarget::Faithful, OnnxTarget::OnnxRuntime}) {
    const std::string name = onnx_target_name(target);
    if (target == OnnxTarget::OnnxRuntime && model.mixed_precision()) {
      std::fprintf(stderr, "note: the model keeps nodes in float: only its faithful export is timed in ORT\n");
      continue;
    }
    const std::string exported = peer.scratch_file("octet_int8_" + name + ".onnx");
    if (exported.empty()) return;  // no ORT runner: the peer's note says why
    export_onnx(model, exported, target);
    peer.add_model({exported, "int8", "octet's QDQ export (target " + name + ")", name});
  }
#else
  (void)model;
  std::fprintf(stderr, "note: this octet was built without the ONNX library: ONNX Runtime int8 is not measured\n");
#endif
}

std::vector<float> random_inputs(int64_t count, const ActShape& shape) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> out(static_cast<size_t>(count * shape.numel()));
  for (float& v : out) v = std::clamp(pixel(rng), -2.5f, 2.5f);
  return out;
}

// The backends of --backend: a comma-separated list, or "all" (those this machine can run).
std::vector<std::string> requested_backends(const std::string& list) {
  const std::vector<std::string> known = engine_backend_names();
  std::vector<std::string> out;
  if (list == "all") {
    for (const std::string& b : known) {
      if (const std::string why = engine_backend(b).why_unavailable(); !why.empty()) {
        std::fprintf(stderr, "skipping %s: %s\n", b.c_str(), why.c_str());
        continue;
      }
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
    const std::string why = engine_backend(backend).why_unavailable();
    check(why.empty(), "--backend " + backend + ": " + why);
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

// The quantized model `bench infer` measures: --quantized, or the checkpoint
// quantized here with the default options.
QuantizedModel model_to_measure(const InferCommand& c, const Checkpoint& checkpoint) {
  if (c.quantized.empty()) {
    std::fprintf(stderr, "quantizing %s (default options; --quantized FILE skips this)\n", c.checkpoint.c_str());
    Checkpoint normalised = checkpoint;
    c.data.normalise(&normalised.mean, &normalised.std, "'" + c.checkpoint + "'");
    return quantize_checkpoint(normalised, c.data.data(), QuantizeOptions{}).model;
  }
  QuantizedModel model = load_quantized_model(c.quantized);
  check_quantized_from(model, "'" + c.quantized + "'", checkpoint, "'" + c.checkpoint + "'");
  return model;
}

// What one `bench infer` run gathers besides the tables' rows.
struct InferReports {
  nlohmann::json largest_convs = nlohmann::json::array(), layers = nlohmann::json::array();
  nlohmann::json speedups = nlohmann::json::array(), timed_choices = nlohmann::json::array();
};

// One backend at one batch size: its rows (the CPU's, one per kernel path
// measured) and, with --layers or on a GPU, its per-node times.
void measure_backend(std::FILE* out, const InferCommand& c, Engine& engine, const std::vector<float>& images,
                     int64_t batch, const std::vector<cpu::KernelPath>& cpu_paths, std::vector<Measurement>& rows,
                     InferReports& reports) {
  const std::string backend = engine.backend();
  const bool cpu = backend == backend_names::kCpu;
  const cpu::KernelPath default_path = cpu::kernel_path();
  for (const cpu::KernelPath path : cpu ? cpu_paths : std::vector<cpu::KernelPath>{default_path}) {
    cpu::set_kernel_path(path);
    const std::string name = cpu && cpu_paths.size() > 1 ? backend + "/" + cpu::kernel_path_name(path) : backend;
    rows.push_back(timed_row(batch, name, "int8", engine.time_runs(images.data(), batch, c.warmup, c.iterations)));
    if (has_output_views(engine.model().graph))
      rows.push_back(timed_row(batch, name + kWithOutputs, "int8",
                               time_runs_with_outputs(engine, images.data(), batch, c.warmup, c.iterations)));
    // Per node: on the CPU only when asked (it runs the network again); on a
    // GPU always, for the largest convolutions' TOPS.
    if (cpu && !c.layers) continue;
    const NodeTimings nodes = engine.profile(images.data(), batch, c.warmup, c.iterations);
    report_largest_convs(out, name, batch, nodes, reports.largest_convs);
    if (!c.layers) continue;
    // A batch the CPU runtime shares out by images (cpu_engine.h) is profiled node by node, all its images at once.
    print_layers(out, name + (cpu ? " int8 per node (all images node by node)" : " per node (launched one by one)") +
                          ", batch " + std::to_string(batch), nodes);
    reports.layers.push_back({{"batch", batch}, {"backend", name}, {"layers", layers_json(nodes)}});
  }
  cpu::set_kernel_path(default_path);
}

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

  const Checkpoint checkpoint = load_checkpoint(c.checkpoint);
  const QuantizedModel model = model_to_measure(c, checkpoint);
  const ActShape input_shape = model.graph.shapes()[0];
  const int64_t largest_batch = *std::max_element(batches.begin(), batches.end());
  // Before the first batch-sized buffer; every node's output in float32 bounds
  // what the engines and the float peers hold per sample.
  double bytes_per_sample = 0;
  for (const ActShape& shape : model.graph.shapes()) bytes_per_sample += 4.0 * static_cast<double>(shape.numel());
  check_batch_fits("octet bench infer", largest_batch, bytes_per_sample,
                   "input images (" + to_string(input_shape) + " float32) and activations (every node's output, "
                   "float32)");
  const std::vector<float> images = random_inputs(largest_batch, input_shape);
  std::vector<std::unique_ptr<Engine>> engines;
  std::string gpu;  // the machine of the first backend off the host CPU
  for (const std::string& backend : backends) {
    engines.push_back(make_engine(model, backend));
    if (gpu.empty()) gpu = engine_backend(backend).device();
  }
  const bool cpu_requested = std::find(backends.begin(), backends.end(), backend_names::kCpu) != backends.end();
  FloatPeers float_peers(checkpoint, threads, !gpu.empty());
  OnnxRuntimePeer onnxruntime(threads);
  if (c.onnxruntime || !c.onnx.empty()) add_onnxruntime_models(c, model, onnxruntime);

  const double load = load_average();
  std::fprintf(out, "%s (%s), %d thread%s, CPU kernels %s, median of %d run%s after %d warm-up, load average %.2f\n",
               checkpoint.model.c_str(), checkpoint.dataset.c_str(), threads, threads == 1 ? "" : "s",
               cpu::kernel_path_name(cpu::kernel_path()), c.iterations, c.iterations == 1 ? "" : "s", c.warmup, load);
  // The machine, so that numbers from several machines are never mixed up.
  const std::string cpu = cpu_description();
  std::fprintf(out, "CPU: %s\n", cpu.c_str());
  std::fprintf(out, "idle threads: %s\n",
               cpu::idle_threads_spin() ? "spin (OpenMP's and ONNX Runtime's default)"
                                        : "sleep (OMP_WAIT_POLICY=passive; ONNX Runtime's too)");
  const PrecisionSummary precision = precision_summary(model);
  std::fprintf(out, "int8 model: %s\n", precision.describe().c_str());
  if (!gpu.empty()) std::fprintf(out, "GPU: %s\n", gpu.c_str());
  if (load > 0.5)
    std::fprintf(out, "note: other processes use the CPU; with more threads than idle cores, OpenMP's spin-waiting "
                      "slows octet and LibTorch alike (OMP_WAIT_POLICY=passive or fewer --threads help)\n");
  std::vector<Measurement> results;
  InferReports reports;
  for (const int64_t batch : batches) {
    std::vector<Measurement> rows;
    for (const std::unique_ptr<Engine>& engine : engines)
      measure_backend(out, c, *engine, images, batch, cpu_paths, rows, reports);
    float_peers.measure(images.data(), input_shape, batch, cpu_requested, c.warmup, c.iterations, rows);
    std::vector<std::string> notes;
    onnxruntime.measure(images.data(), input_shape, batch, c.warmup, c.iterations, rows, notes);
    reports.speedups.push_back(print_batch_table(out, batch, rows));
    for (const std::string& note : notes) std::fprintf(out, "  note: %s\n", note.c_str());
    std::fflush(out);
    results.insert(results.end(), rows.begin(), rows.end());
  }
  for (const std::unique_ptr<Engine>& engine : engines) {
    const std::vector<Engine::TimedChoice> choices = engine->timed_choices();
    if (choices.empty()) continue;
    if (c.layers) print_timed_choices(out, engine->backend(), choices);
    reports.timed_choices = timed_choices_json(choices);
  }
  if (c.json.empty()) return;
  nlohmann::json measurements = nlohmann::json::array();
  for (const Measurement& m : results)
    measurements.push_back({{"batch", m.batch},
                            {"backend", m.name},
                            {"precision", m.precision},
                            {"latency_ms", m.latency_ms},
                            {"fastest_ms", m.fastest_ms},
                            {"images_per_second", m.images_per_second()}});
  write_text_output(c.json, nlohmann::json({{"checkpoint", c.checkpoint},
                                            {"quantized", c.quantized},
                                            {"model", checkpoint.model},
                                            {"dataset", checkpoint.dataset},
                                            {"int8_precision", precision_json(precision)},
                                            {"cpu", cpu},
                                            {"gpu", gpu.empty() ? nlohmann::json() : nlohmann::json(gpu)},
                                            {"threads", threads},
                                            {"idle_threads_spin", cpu::idle_threads_spin()},
                                            {"cpu_kernels", cpu::kernel_path_name(cpu::kernel_path())},
                                            {"load_average", load},
                                            {"iterations", c.iterations},
                                            {"onnxruntime", onnxruntime.version().empty()
                                                                ? nlohmann::json()
                                                                : nlohmann::json(onnxruntime.version())},
                                            {"warmup", c.warmup},
                                            {"results", measurements},
                                            {"speedups", reports.speedups},
                                            {"largest_conv", reports.largest_convs},
                                            {"layers", reports.layers},
                                            {"imma_tiles", reports.timed_choices}})
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
  add_data_options(infer, i->data, kDatasetFolder | kCalibrationData);  // for calibration when quantizing here
  infer->add_option("--backend", i->backend,
                    "Comma-separated: " + backend_names_list() +
                        "; or all (those this machine can run). LibTorch float32 on the CPU is measured with " +
                        backend_names::kCpu)
      ->capture_default_str();
  infer->add_option("--batch", i->batches, "Batch sizes, comma-separated")->capture_default_str();
  infer->add_option("--iterations", i->iterations,
                    "Timed runs per measurement (the median is reported, and the fastest beside it)")
      ->capture_default_str();
  infer->add_option("--warmup", i->warmup, "Untimed runs before each measurement")->capture_default_str();
  infer->add_option("--threads", i->threads, "CPU threads for octet and LibTorch (0: all cores)")
      ->capture_default_str();
  infer->add_option("--cpu-kernels", i->cpu_kernels,
                    "CPU kernel paths to measure, comma-separated: reference, avx2, avx512-vnni (default: the one in "
                    "use, the fastest this CPU has unless OCTET_CPU_KERNELS=reference)");
  infer->add_flag("--layers", i->layers,
                  "Also time every node, with achieved TOPS (CPU: from the engine's hook; CUDA: profile()), and "
                  "show the time of each cuda-imma tile candidate per conv shape");
  infer->add_flag("--onnxruntime", i->onnxruntime,
                  "Also time ONNX Runtime (CPU, npm's onnxruntime-node; tools/setup.sh test installs it) on octet's "
                  "QDQ exports of the quantized model (int8; rows onnxruntime-cpu/faithful and "
                  "onnxruntime-cpu/onnxruntime, the two targets of octet export --target), same images, batches "
                  "and threads; its idle threads spin (ORT's default) unless OMP_WAIT_POLICY=passive makes "
                  "octet's sleep, when ORT's sleep too");
  infer->add_option("--onnx", i->onnx,
                    "The float model as ONNX (e.g. the file octet import read), timed in ONNX Runtime too "
                    "(float32); implies --onnxruntime");
  add_json_option(infer, i->json);
  infer->callback([i] { run_infer(*i); });

  add_bench_data_command(*bench);
  add_bench_train_command(*bench);
}

}  // namespace octet
