#include "quant/fixed_point.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace octet {

FixedPoint to_fixed_point(const std::vector<double>& reals, const std::string& where, int64_t channel) {
  // The messages are built only on failure: the `auto` search makes multipliers for every candidate.
  const auto place = [&] { return channel < 0 ? where : where + " channel " + std::to_string(channel); };
  double largest = 0;
  for (double m : reals) {
    if (!std::isfinite(m) || m < 0)
      fail(place() + ": requantization multiplier " + std::to_string(m) + " is negative or not finite");
    largest = std::max(largest, m);
  }
  FixedPoint fp;
  if (largest == 0) {
    fp.multipliers.assign(reals.size(), 0);
    return fp;
  }
  int exponent = 0;
  std::frexp(largest, &exponent);  // largest = f * 2^exponent, f in [0.5, 1)
  int shift = 31 - exponent;
  if (shift < 1)
    fail(place() + ": requantization multiplier " + std::to_string(largest) +
         " is too large for int32 fixed point (the output scale is over 2^30 times the input's)");
  shift = std::min(shift, 62);
  for (;;) {
    fp.multipliers.clear();
    bool fits = true;
    for (double m : reals) {
      const long long q = std::llround(std::ldexp(m, shift));
      fits = fits && q < (1ll << 31);
      fp.multipliers.push_back(static_cast<int32_t>(std::min(q, (1ll << 31) - 1)));
    }
    if (fits || shift == 1) break;
    --shift;  // the largest rounded up to 2^31
  }
  fp.shift = shift;
  return fp;
}

}  // namespace octet
