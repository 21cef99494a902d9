#include "tools/bench_train_launch.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/file_io.h"

extern char** environ;

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

// Runs argv with its standard output sent to standard error (the bench's own
// standard output carries only its table); returns the exit status.
int run_to_stderr(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  check(error == 0, "cannot start " + argv[0] + ": " + std::strerror(error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    check(errno == EINTR, std::string("waiting for octet launch failed: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
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
    const int status = run_to_stderr(argv);
    check(status == 0, "'" + command + "' exited with status " + std::to_string(status));
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
