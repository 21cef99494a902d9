// `octet bench infer`'s runs of a model whose outputs are arranged or decoded
// (graph/output_view.h: detection heads' rows, YOLOv5's boxes): the engine's
// run and what octet predict and the Python module do after it, the work an
// ONNX Runtime run of the model's export includes.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/engine.h"

namespace octet {

// The row name of a backend's runs with the outputs ("cpu + outputs").
constexpr const char* kWithOutputs = " + outputs";

// Milliseconds of each of `iterations` runs after `warmup`: the engine's run_outputs, the outputs as floats
// (qmodel/output_floats.h: dequantized, decoded) and arranged as the model's outputs.
std::vector<double> time_runs_with_outputs(const Engine& engine, const float* images, int64_t batch, int warmup,
                                           int iterations);

}  // namespace octet
