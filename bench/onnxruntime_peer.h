// ONNX Runtime (CPU, npm's onnxruntime-node) as a peer of `octet bench
// infer`: ONNX files timed by ORT itself (tools/ort_run.mjs --time, in a node
// process) on the same images, batch sizes and thread count as octet's
// backends; e.g. the user's float model (fp32) and octet's QDQ export of the
// quantized model (int8), one row per export target.
#pragma once

#include <string>
#include <vector>

#include "bench/float_peers.h"
#include "graph/graph.h"

namespace octet {

constexpr const char* kOnnxRuntimeRow = "onnxruntime-cpu";

struct OnnxRuntimeModel {
  std::string path;       // an .onnx file
  std::string precision;  // the table's column: "float32", "int8"
  std::string what;       // for notes: "the float model", "octet's QDQ export (target faithful)"
  // The row's name after kOnnxRuntimeRow and a slash (an export's target,
  // "onnxruntime-cpu/faithful"); empty: the row is kOnnxRuntimeRow alone.
  std::string variant;
};

class OnnxRuntimePeer {
 public:
  // `threads` 0: ORT's default (every core). Finds tools/ort_run.mjs
  // ($OCTET_ORT_RUN, else the checkout's); node and ORT on the first measure().
  explicit OnnxRuntimePeer(int threads);
  ~OnnxRuntimePeer();
  OnnxRuntimePeer(const OnnxRuntimePeer&) = delete;
  OnnxRuntimePeer& operator=(const OnnxRuntimePeer&) = delete;

  void add_model(OnnxRuntimeModel model) { models_.push_back(std::move(model)); }
  // A path in this peer's scratch folder (removed with it), e.g. for an export
  // to time; empty when the peer is unavailable.
  std::string scratch_file(const std::string& name) const;

  // Appends a row ("onnxruntime-cpu[/variant]") per model that runs at this batch size
  // (`images`: batch x C x H x W). A model ORT cannot run (e.g. one exported
  // with a fixed batch of 1) adds a note instead, naming the file and ORT's
  // reason; without node or ORT, one note says so and nothing is measured.
  void measure(const float* images, const ActShape& shape, int64_t batch, int warmup, int iterations,
               std::vector<Measurement>& rows, std::vector<std::string>& notes);
  // ORT's version, once a model ran.
  const std::string& version() const { return version_; }

 private:
  std::vector<OnnxRuntimeModel> models_;
  int threads_;
  std::string script_, scratch_, unavailable_, version_;
  bool unavailable_noted_ = false;
};

}  // namespace octet
