#include "train/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"

namespace octet {

namespace {

volatile sig_atomic_t stop_signal = 0;
void remember_signal(int signal) { stop_signal = signal; }

// A port nobody listens on now: the kernel's choice for a socket bound to port 0.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  check(fd >= 0, std::string("octet launch: cannot open a socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  check(ok, std::string("octet launch: cannot find a free port: ") + std::strerror(errno));
  return ntohs(address.sin_port);
}

pid_t start_rank(const LaunchOptions& o, int rank, int port) {
  const pid_t pid = fork();
  check(pid >= 0, std::string("octet launch: fork failed: ") + std::strerror(errno));
  if (pid > 0) return pid;
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // a launcher killed outright takes its ranks along
#endif
  const std::string world = std::to_string(o.processes), r = std::to_string(rank);
  setenv("RANK", r.c_str(), 1);
  setenv("LOCAL_RANK", r.c_str(), 1);
  setenv("WORLD_SIZE", world.c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", world.c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& word : o.command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "octet: error: octet launch: rank %d cannot run '%s': %s\n", rank, argv[0],
               std::strerror(errno));
  _exit(127);
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

void launch_ranks(const LaunchOptions& o) {
  check(o.processes >= 1 && o.processes <= 4096, "-n must be between 1 and 4096");
  check(o.port >= 0 && o.port <= 65535, "--port must be a TCP port (1-65535), or 0 for a free one");
  check(!o.command.empty(), "octet launch needs a command after --, e.g. octet launch -n 2 -- octet train ...");
  const int port = o.port > 0 ? o.port : free_port();

  // Stopping the launcher stops its ranks: the handlers only interrupt waitpid.
  struct sigaction action {};
  action.sa_handler = remember_signal;
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);

  std::vector<pid_t> pids;
  for (int rank = 0; rank < o.processes; ++rank) pids.push_back(start_rank(o, rank, port));
  int running = o.processes, failed_rank = -1, failed_status = 0;
  const auto stop_others = [&](int signal) {
    for (pid_t pid : pids)
      if (pid > 0) kill(pid, signal);
  };
  using Clock = std::chrono::steady_clock;
  Clock::time_point kill_deadline{};
  bool stopping = false;
  while (running > 0) {
    if (stop_signal && !stopping) {
      std::fprintf(stderr, "octet launch: %s, stopping %d rank(s)\n", strsignal(stop_signal), running);
      stop_others(SIGTERM);
      stopping = true;
      kill_deadline = Clock::now() + std::chrono::seconds(10);
    }
    int status = 0;
    // Once stopping, poll, so that ranks ignoring SIGTERM get SIGKILL after a grace period.
    const pid_t pid = waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid < 0 && errno != EINTR) break;
    if (pid <= 0) {
      if (stopping && Clock::now() > kill_deadline) stop_others(SIGKILL);
      if (stopping) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int rank = 0;
    while (rank < o.processes && pids[rank] != pid) ++rank;
    if (rank == o.processes) continue;
    pids[rank] = -1;
    --running;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && failed_rank < 0 && !stop_signal) {
      failed_rank = rank;
      failed_status = status;
      if (running > 0) {
        std::fprintf(stderr, "octet launch: rank %d %s, stopping the other %d rank(s)\n", rank,
                     describe(status).c_str(), running);
        stop_others(SIGTERM);
        stopping = true;
        kill_deadline = Clock::now() + std::chrono::seconds(10);
      }
    }
  }
  if (stop_signal) fail("octet launch: stopped by " + std::string(strsignal(stop_signal)));
  if (failed_rank >= 0)
    fail("octet launch: rank " + std::to_string(failed_rank) + " of " + std::to_string(o.processes) + " " +
         describe(failed_status) + " (command: " + o.command.front() + ")");
}

}  // namespace octet
