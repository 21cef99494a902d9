// An on/off switch read from the environment: "1" on, "0" off; unset or
// empty leaves the caller's default. Any other value fails naming the
// variable, so that a misspelt switch is not silently ignored.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "common/error.h"

namespace octet {

inline std::optional<bool> env_switch(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::string v = value;
  check(v == "0" || v == "1", std::string("environment variable ") + name + ": '" + v + "' is neither 0 nor 1");
  return v == "1";
}

}  // namespace octet
