// A child process whose standard output and error both go into one pipe that
// the parent reads (posix_spawn: no fork of a large, threaded parent).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace octet {

struct PipedChild {
  pid_t pid = -1;
  int output = -1;  // the pipe's read end; the caller closes it
};

// This process's environment, "NAME=value" each.
std::vector<std::string> this_environment();

// Starts argv with `environment` ("NAME=value" each); argv[0] is looked up on
// PATH. Throws Error naming argv[0] when it cannot start.
PipedChild spawn_piped(const std::vector<std::string>& argv, std::vector<std::string> environment);

// Waits for the child: its exit status, or 128 + the signal that ended it.
int wait_for_exit(pid_t pid);

}  // namespace octet
