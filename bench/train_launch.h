// `bench train scaling`: one data-parallel run as a child process,
// `octet launch -n N -- octet train ... --json FILE`, with this octet binary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "train/options.h"

namespace octet {

// The `octet train` arguments that reproduce `o` (without --json).
std::vector<std::string> train_arguments(const TrainOptions& o);

// Runs `processes` ranks of `octet train` through `octet launch` on `port`
// (0: a free port launch picks); their output goes to standard error.
// Returns rank 0's training record; fails naming the command and the ranks'
// first error when it exits with an error.
nlohmann::json launch_training(const TrainOptions& o, int processes, int port);

}  // namespace octet
