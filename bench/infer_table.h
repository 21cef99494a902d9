// `octet bench infer`'s table of one batch size: every row (int8 backends
// and float peers) with its speed-up over the float peer users would pick
// (LibTorch float16 + CUDA graph on a GPU, else float32 on the CPU), and
// int8 against float on the CPU and overall.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/float_peers.h"

namespace octet {

// Prints the table; returns its speed-ups as JSON.
nlohmann::json print_batch_table(std::FILE* out, int64_t batch, const std::vector<Measurement>& rows);

}  // namespace octet
