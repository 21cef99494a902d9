// Numbers read from JSON in files, range-checked before conversion: nlohmann's
// get<float>() or get<int64_t>() of an out-of-range number is a plain cast,
// undefined behaviour in C++. Fail with a message naming `what`.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.h"

namespace octet {

inline float json_float(const nlohmann::json& v, const std::string& what) {
  check(v.is_number(), what + " is " + v.dump() + ", not a number");
  const double d = v.get<double>();
  check(std::isfinite(d) && std::abs(d) <= std::numeric_limits<float>::max(),
        what + " is " + v.dump() + ", outside the float range");
  return static_cast<float>(d);
}

inline std::vector<float> json_floats(const nlohmann::json& v, const std::string& what) {
  check(v.is_array(), what + " is not an array of numbers");
  std::vector<float> out;
  for (const nlohmann::json& x : v) out.push_back(json_float(x, what + " value"));
  return out;
}

inline int64_t json_int64(const nlohmann::json& v, const std::string& what) {
  check(v.is_number_integer() && (v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT64_MAX) : true),
        what + " is " + v.dump() + ", not an integer");
  return v.get<int64_t>();
}

}  // namespace octet
