//===- random.h - The inputs every check and benchmark uses ----*- C++ -*-===//
//
// docs/program-format.md: each logical input tensor is drawn from (seed,
// argument index), scaled by 1/sqrt(its last dimension), identical whatever the
// plan. Element i (row-major) is a standard normal from a counter-based
// generator, so any device can produce any block of it without producing the
// rest:
//
//   u1, u2 = uniform(seed, arg, 2i), uniform(seed, arg, 2i + 1)   in (0, 1]
//   value  = sqrt(-2 ln u1) cos(2 pi u2) / sqrt(last dimension)
//
// where uniform is splitmix64 of a mixed counter, top 53 bits. The value is
// then rounded to the argument's element type.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_RANDOM_H
#define EIN_RANDOM_H

#include <cmath>
#include <cstdint>

namespace ein {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A uniform in (0, 1] from (seed, argument, counter).
inline double uniform(uint64_t seed, uint64_t argument, uint64_t counter) {
  uint64_t key =
      splitmix64(splitmix64(seed) ^ (argument * 0xd1b54a32d192ed03ull));
  uint64_t bits = splitmix64(key ^ splitmix64(counter));
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/// Element `index` of input `argument` before rounding to its element type.
inline double inputValue(uint64_t seed, uint64_t argument, uint64_t index,
                         int64_t lastDimension) {
  const double twoPi = 6.283185307179586476925286766559;
  double u1 = uniform(seed, argument, 2 * index);
  double u2 = uniform(seed, argument, 2 * index + 1);
  double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(twoPi * u2);
  return normal /
         std::sqrt(static_cast<double>(lastDimension > 0 ? lastDimension : 1));
}

} // namespace ein

#endif // EIN_RANDOM_H
