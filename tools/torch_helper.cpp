#include "tools/torch_helper.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/error.h"

namespace octet {

namespace {
char** command_line = nullptr;
}  // namespace

void remember_command_line(char** argv) { command_line = argv; }

void use_torch_helper() {
#ifdef OCTET_TORCH_HELPER
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  check(n > 0, std::string("cannot find this program's path (/proc/self/exe): ") + std::strerror(errno));
  std::string helper(self, static_cast<size_t>(n));
  helper = helper.substr(0, helper.rfind('/') + 1) + OCTET_TORCH_HELPER;
  check(command_line != nullptr, "internal: the command line was not kept");
  std::fflush(stdout);
  std::fflush(stderr);
  execv(helper.c_str(), command_line);
  fail("this command needs LibTorch, which runs in " + helper + ", and it cannot start: " + std::strerror(errno) +
       " (build it: tools/setup.sh build)");
#endif
}

}  // namespace octet
