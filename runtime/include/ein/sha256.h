//===- sha256.h - SHA-256 of a byte string (FIPS 180-4) ---------*- C++ -*-===//
//
// The manifest records the SHA-256 of each kernel library, which the runtime
// checks before it loads one (docs/bundle-format.md): a truncated, zeroed or
// swapped library is a load error instead of a crash inside dlopen.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_SHA256_H
#define EIN_SHA256_H

#include <cstddef>
#include <string>

namespace ein {

/// The SHA-256 digest of `size` bytes at `data`, as 64 lowercase hex digits.
std::string sha256Hex(const void *data, size_t size);

inline std::string sha256Hex(const std::string &bytes) {
  return sha256Hex(bytes.data(), bytes.size());
}

} // namespace ein

#endif // EIN_SHA256_H
