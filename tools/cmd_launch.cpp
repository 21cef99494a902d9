// `octet launch -n N -- COMMAND...`: a single-machine torchrun (train/launcher.h).
#include <memory>

#include "tools/commands.h"
#include "train/launcher.h"

namespace octet {

void add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "launch", "Run a command as N data-parallel ranks on this machine (a single-machine torchrun)");
  cmd->footer(
      "Example: octet launch -n 2 -- octet train --model resnet20 --dataset cifar10 --batch-size 64\n"
      "Each copy gets RANK and LOCAL_RANK (0..N-1), WORLD_SIZE and LOCAL_WORLD_SIZE (N), MASTER_ADDR=127.0.0.1 and "
      "MASTER_PORT. Output passes through (octet train prints from rank 0 only). If a rank fails or is killed, the "
      "others get SIGTERM (SIGKILL 10 s later) and octet launch exits with status 1 naming it.");
  auto o = std::make_shared<LaunchOptions>();
  cmd->add_option("-n,--processes", o->processes, "Number of ranks to start")->capture_default_str();
  cmd->add_option("--port", o->port, "MASTER_PORT for rank 0's rendezvous (default: a free port)");
  cmd->add_option("command", o->command, "The command to run, after --")->required();
  cmd->callback([o] { launch_ranks(*o); });
}

}  // namespace octet
