// `octet launch -n N -- COMMAND...`: a single-machine torchrun. Starts N copies
// of COMMAND as the ranks of a data-parallel run (RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT in their environment,
// which train/process_group.h reads), passes their output through, and waits.
// A rank that fails or is killed stops the others, so a run never hangs on a
// dead peer. Torch-free: `octet` runs it without LibTorch.
#pragma once

#include <string>
#include <vector>

namespace octet {

struct LaunchOptions {
  int processes = 2;
  int port = 0;  // 0: a free one
  std::vector<std::string> command;
};

// Fails naming the first rank that failed and how, or the signal that stopped the launcher.
void launch_ranks(const LaunchOptions& options);

}  // namespace octet
