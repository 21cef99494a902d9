// Per-node timing for `octet bench infer --layers`: each node's MACs, time and
// achieved int8 TOPS, as a table and as JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/cpu/engine.h"

namespace octet {

struct LayerTiming {
  std::string name, op;
  double macs = 0, milliseconds = 0;
  std::string kernel;  // cuda-imma: the tile configuration
};

// Median milliseconds of every node of the CPU runtime: the engine's hook
// sees each node finish, the logits node ends the run.
std::vector<LayerTiming> cpu_layer_times(const CpuEngine& engine, const float* input, int64_t batch, int warmup,
                                         int iterations);

// Achieved int8 tera-operations per second (2 per multiply-add).
double tops(const LayerTiming& layer);

// The convolutions with the most multiply-adds: all of them when several tie
// (CIFAR ResNets have one per stage, each with the same count), in graph order.
std::vector<LayerTiming> largest_convs(const std::vector<LayerTiming>& layers);

void print_layers(std::FILE* out, const std::string& title, const std::vector<LayerTiming>& layers);
nlohmann::json layers_json(const std::vector<LayerTiming>& layers);

}  // namespace octet
