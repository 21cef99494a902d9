// Every backend the operator harness (test_backend_ops) holds to the
// reference, as one table: the CPU runtime's kernel paths, the CUDA device
// layout executed on the host, and every other backend of the registry
// (runtime/engine.h: the CUDA ones where this build has them).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "qmodel/quantized_model.h"

namespace octet {

struct BackendOutputs {
  // Per node, NHWC without channel padding, int16 where wide (the oracle's
  // type, graph/op.h ActTensor); empty for the output node.
  std::vector<std::vector<int16_t>> values;
  // Every output's logits (Graph::outputs) of every run made, labelled ("with buffer reuse, run 2").
  std::vector<std::pair<std::string, std::vector<Int32Tensor>>> logits;
};

struct BackendRunner {
  std::string name;   // "cpu-reference", "cuda-imma", ...
  int64_t max_batch;  // runs at most this many of a case's images (0: all of them)
  std::function<std::string()> why_unavailable;  // "" where it runs
  // "" when it has a kernel for every node of `model`, else why not (the case is then skipped).
  std::function<std::string(const QuantizedModel& model)> why_unsupported;
  // `images`: batch x C x H x W floats.
  std::function<BackendOutputs(const QuantizedModel& model, const std::vector<float>& images, int64_t batch)> run;
};

const std::vector<BackendRunner>& backend_runners();

}  // namespace octet
