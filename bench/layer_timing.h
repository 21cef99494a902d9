// Per-node timing for `octet bench infer` (Engine::profile): each node's
// MACs, time and achieved int8 TOPS as a table and as JSON, the largest
// convolutions' TOPS, and the choices a backend made by timing (cuda-imma's
// tile per convolution shape).
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/engine.h"

namespace octet {

using NodeTimings = std::vector<Engine::NodeTiming>;

// Achieved int8 tera-operations per second (2 per multiply-add).
double tops(const Engine::NodeTiming& node);

// The convolutions with the most multiply-adds: all of them when several tie
// (CIFAR ResNets have one per stage, each with the same count), in graph order.
NodeTimings largest_convs(const NodeTimings& nodes);

void print_layers(std::FILE* out, const std::string& title, const NodeTimings& nodes);
nlohmann::json layers_json(const NodeTimings& nodes);

// The achieved TOPS of the largest convolutions: one line (the best and the
// worst when several tie) and a JSON entry for each, appended to `entries`.
void report_largest_convs(std::FILE* out, const std::string& backend, int64_t batch, const NodeTimings& nodes,
                          nlohmann::json& entries);

// Each timed problem's candidates in milliseconds, the chosen one starred,
// and what the timing cost the first run.
void print_timed_choices(std::FILE* out, const std::string& backend, const std::vector<Engine::TimedChoice>& choices);
nlohmann::json timed_choices_json(const std::vector<Engine::TimedChoice>& choices);

}  // namespace octet
