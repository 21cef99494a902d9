#include "bench/train_launch.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/child_process.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/progress.h"

namespace octet {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::string this_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  check(n > 0, std::string("cannot find this octet binary through /proc/self/exe: ") + std::strerror(errno));
  return std::string(path, static_cast<size_t>(n));
}

// This process's environment for a child whose output goes through a pipe:
// it sees no terminal, so it is told to draw its progress when ours is one.
std::vector<std::string> child_environment() {
  std::vector<std::string> environment = this_environment();
  if (isatty(STDERR_FILENO)) environment.push_back(std::string(kForceProgressVariable) + "=1");
  return environment;
}

// Copies everything read from `fd` to standard error as it comes, until every
// process holding its other end is gone; keeps the first "octet: error: "
// line's message.
void copy_to_stderr(int fd, std::string* first_error) {
  const std::string marker = "octet: error: ";
  std::string line;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (ssize_t done = 0; done < n;) {
      const ssize_t written = write(STDERR_FILENO, buffer + done, static_cast<size_t>(n - done));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) break;
      done += written;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] != '\n') {
        line += buffer[i];
        continue;
      }
      if (first_error->empty() && line.rfind(marker, 0) == 0) *first_error = line.substr(marker.size());
      line.clear();
    }
  }
}

// Runs argv with its standard output and error copied to standard error (the
// bench's own standard output carries only its table); returns the exit
// status and keeps the first "octet: error: " line, the ranks' own reason,
// which the status alone does not give.
int run_to_stderr(const std::vector<std::string>& argv, std::string* first_error) {
  const PipedChild child = spawn_piped(argv, child_environment());
  copy_to_stderr(child.output, first_error);
  close(child.output);
  return wait_for_exit(child.pid);
}

}  // namespace

std::vector<std::string> train_arguments(const TrainOptions& o) {
  std::vector<std::string> a = {"--model",     o.model,
                                "--dataset",   o.dataset,
                                "--epochs",    std::to_string(o.epochs),
                                "--batch-size", std::to_string(o.batch_size),
                                "--optimizer", o.optimizer.name,
                                "--lr",        number(o.optimizer.lr),
                                "--momentum",  number(o.optimizer.momentum),
                                "--weight-decay", number(o.optimizer.weight_decay),
                                "--schedule",  o.schedule,
                                "--warmup-epochs", number(o.warmup_epochs),
                                "--device",    o.device,
                                "--workers",   std::to_string(o.workers),
                                "--threads",   std::to_string(o.threads),
                                "--seed",      std::to_string(o.seed),
                                "--max-steps", std::to_string(o.max_steps),
                                "--train-samples", std::to_string(o.train_limit),
                                "--test-samples", std::to_string(o.test_limit),
                                "--allreduce", o.allreduce,
                                "--bucket-mb", number(o.bucket_mb)};
  if (!o.data_dir.empty()) a.insert(a.end(), {"--data", o.data_dir});
  if (!o.batch_norm) a.push_back("--no-bn");
  if (!o.augment) a.push_back("--no-augment");
  if (o.drop_last) a.push_back("--drop-last");
  return a;
}

nlohmann::json launch_training(const TrainOptions& o, int processes, int port) {
  const std::string exe = this_executable();
  char dir_template[] = "/tmp/octet-bench-train-XXXXXX";
  check(mkdtemp(dir_template) != nullptr, std::string("cannot make a temporary folder: ") + std::strerror(errno));
  const std::string dir = dir_template, json_path = dir + "/train.json";
  std::vector<std::string> argv = {exe, "launch", "-n", std::to_string(processes)};
  if (port > 0) argv.insert(argv.end(), {"--port", std::to_string(port)});
  argv.insert(argv.end(), {"--", exe, "train"});
  for (const std::string& a : train_arguments(o)) argv.push_back(a);
  argv.insert(argv.end(), {"--json", json_path});
  std::string command;
  for (size_t i = 0; i < argv.size(); ++i) command += (i ? " " : "") + argv[i];
  try {
    std::string first_error;
    const int status = run_to_stderr(argv, &first_error);
    check(status == 0, "'" + command + "' exited with status " + std::to_string(status) +
                           (first_error.empty() ? "" : ": " + first_error));
    std::ifstream in(json_path);
    check(in.good(), "'" + command + "' wrote no training record");
    nlohmann::json record = nlohmann::json::parse(in);
    remove_tree(dir);
    return record;
  } catch (...) {
    remove_tree(dir);
    throw;
  }
}

}  // namespace octet
