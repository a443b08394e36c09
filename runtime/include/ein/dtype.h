//===- dtype.h - Element types and their rounding ---------------*- C++ -*-===//
//
// The element types a program or bundle may declare, their names, and exact
// round-to-nearest-even conversions between float64 and the 16-bit formats
// (which the host has no native type for). MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_DTYPE_H
#define EIN_DTYPE_H

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace ein {

enum class DType { F64, F32, F16, BF16, I64, I32, I1, Index };

/// The name used in program.json and the manifest ("f32", "bf16", "i1", ...).
const char *dtypeName(DType type);
/// The inverse of dtypeName; nullopt for an unknown name.
std::optional<DType> parseDType(const std::string &name);

inline bool isFloat(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::F16 ||
         t == DType::BF16;
}

/// Bytes per element in memory and in .npy files (i1 takes a byte).
int dtypeBytes(DType type);

/// IEEE binary16 and bfloat16 bit patterns, rounding to nearest even; NaN
/// stays NaN and overflow becomes infinity.
uint16_t toHalfBits(float value);
float fromHalfBits(uint16_t bits);
uint16_t toBFloat16Bits(float value);
float fromBFloat16Bits(uint16_t bits);

/// `value` as a float rounded to odd, the exact first step of rounding a
/// double to a 16-bit float through float (no double rounding).
float narrowForHalf(double value);

/// `value` truncated toward zero and wrapped to `bits` bits (two's
/// complement); non-finite values give 0.
int64_t wrapInteger(double value, int bits);

/// `value` rounded to what `type` can hold (floats round to nearest even,
/// once, from the double; integers truncate toward zero and wrap; i1 is
/// value != 0).
double roundTo(DType type, double value);

/// One element of `type` in memory (little-endian, dtypeBytes(type) bytes)
/// as a double, and back: encodeElement rounds as roundTo does.
double decodeElement(DType type, const unsigned char *p);
void encodeElement(DType type, double value, unsigned char *p);

} // namespace ein

#endif // EIN_DTYPE_H
