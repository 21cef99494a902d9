#include "bench/onnxruntime_peer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/child_process.h"
#include "common/error.h"
#include "common/file_io.h"
#include "runtime/cpu/idle_threads.h"

namespace octet {

namespace {

// argv[0] looked up on PATH; its standard output and error together.
int run_capturing(const std::vector<std::string>& argv, std::string* output) {
  PipedChild child;
  try {
    child = spawn_piped(argv, this_environment());
  } catch (const Error& e) {
    *output = e.what();
    return 127;
  }
  char buffer[4096];
  for (ssize_t n; (n = read(child.output, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output->append(buffer, static_cast<size_t>(n));
  }
  close(child.output);
  return wait_for_exit(child.pid);
}

// float32 N x C x H x W as numpy.save writes it (format 1.0).
void write_npy(const std::string& path, const float* values, int64_t batch, const ActShape& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(batch) + ", " +
                       std::to_string(shape.c) + ", " + std::to_string(shape.h) + ", " + std::to_string(shape.w) +
                       "), }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(header.size() & 0xff),
                                    static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(prefix), sizeof prefix);
  out << header;
  out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(sizeof(float) * batch * shape.numel()));
  check(static_cast<bool>(out), "cannot write " + path);
}

// ort_run's last line: its JSON summary, or its error.
std::string last_line(std::string output) {
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output.substr(output.rfind('\n') + 1);  // from 0 when there is one line (npos + 1)
}

}  // namespace

OnnxRuntimePeer::OnnxRuntimePeer(int threads) : threads_(threads) {
  const char* override_script = std::getenv("OCTET_ORT_RUN");
  script_ = override_script ? override_script : OCTET_ORT_RUN_SCRIPT;
  if (!file_exists(script_)) {
    unavailable_ = "no " + script_ + " (set OCTET_ORT_RUN to tools/ort_run.mjs of an octet checkout)";
    return;
  }
  char dir[] = "/tmp/octet-bench-onnxruntime-XXXXXX";
  check(mkdtemp(dir) != nullptr, std::string("cannot make a scratch folder in /tmp: ") + std::strerror(errno));
  scratch_ = dir;
}

OnnxRuntimePeer::~OnnxRuntimePeer() {
  if (scratch_.empty()) return;
  try {
    remove_tree(scratch_);
  } catch (const Error&) {  // a scratch folder left in /tmp is not worth failing the benchmark for
  }
}

std::string OnnxRuntimePeer::scratch_file(const std::string& name) const {
  return scratch_.empty() ? "" : scratch_ + "/" + name;
}

void OnnxRuntimePeer::measure(const float* images, const ActShape& shape, int64_t batch, int warmup, int iterations,
                              std::vector<Measurement>& rows, std::vector<std::string>& notes) {
  if (unavailable_.empty()) write_npy(scratch_ + "/images.npy", images, batch, shape);
  for (const OnnxRuntimeModel& model : models_) {
    if (!unavailable_.empty()) break;  // set by the first model when node or ORT is missing
    std::vector<std::string> command = {"node", script_, model.path, "--input", scratch_ + "/images.npy", "--out",
                                        scratch_, "--threads", std::to_string(threads_), "--time",
                                        std::to_string(iterations), "--warmup", std::to_string(warmup)};
    // ORT's pool spins whatever OMP_WAIT_POLICY says: where OpenMP's threads
    // sleep, ORT's sleep too, or ORT alone would skip the wake-ups.
    if (!cpu::idle_threads_spin()) command.push_back("--sleep-idle");
    std::string output;
    const int status = run_capturing(command, &output);
    const std::string line = last_line(output);
    if (status == 3 || status == 127) {  // ORT not installed, or no node
      unavailable_ = line;
      break;
    }
    nlohmann::json result = nlohmann::json::parse(line, nullptr, false);
    if (status != 0 || result.is_discarded() || !result.contains("timing")) {
      notes.push_back("onnxruntime " + model.precision + " (" + model.what + ", " + model.path + ") at batch " +
                      std::to_string(batch) + ": " + line);
      continue;
    }
    const std::string row = std::string(kOnnxRuntimeRow) + (model.variant.empty() ? "" : "/" + model.variant);
    const nlohmann::json& timing = result["timing"];
    rows.push_back(
        {batch, row, model.precision, timing["median_ms"].get<double>(), timing["fastest_ms"].get<double>()});
    if (version_.empty() && result["onnxruntime"].is_string()) version_ = result["onnxruntime"].get<std::string>();
  }
  if (!unavailable_.empty() && !unavailable_noted_) {
    notes.push_back("ONNX Runtime not measured: " + unavailable_);
    unavailable_noted_ = true;
  }
}

}  // namespace octet
