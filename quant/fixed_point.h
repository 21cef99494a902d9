// Real multipliers as int32 fixed point for common/requantize.h: a set of
// multipliers that share one right shift (a conv channel and its fused
// residual, the two inputs of an add) is encoded with the largest in
// [2^30, 2^31) so that it keeps 31 significant bits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {

struct FixedPoint {
  std::vector<int32_t> multipliers;  // one per real multiplier given
  int32_t shift = 1;
};

// Fails naming `where` (and `channel`, unless negative) when the largest
// multiplier is >= 2^30 (the scales cannot be represented) or any is negative
// or not finite. Multipliers below 2^-31 keep shift 62 and lose precision,
// down to 0: their output is then 0.
FixedPoint to_fixed_point(const std::vector<double>& reals, const std::string& where, int64_t channel = -1);

}  // namespace octet
