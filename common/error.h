// octet's one exception type: every user-facing failure carries a message that
// names what was wrong (a file, a field, an option), so the CLI and the Python
// module can print it as is.
#pragma once

#include <stdexcept>
#include <string>

namespace octet {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A goal the user set that the work could not reach (quantize --min-agreement):
// what it made is written, and the command line exits with status 3.
class GoalNotMet : public Error {
 public:
  using Error::Error;
};

[[noreturn]] inline void fail(const std::string& what) { throw Error(what); }

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

}  // namespace octet
