//===- dtype.cpp - Element types and their rounding -----------------------===//

#include "ein/dtype.h"

#include <cmath>

namespace ein {

namespace {
struct Entry {
  DType type;
  const char *name;
  int bytes;
};
constexpr Entry kTypes[] = {{DType::F64, "f64", 8}, {DType::F32, "f32", 4},
                            {DType::F16, "f16", 2}, {DType::BF16, "bf16", 2},
                            {DType::I64, "i64", 8}, {DType::I32, "i32", 4},
                            {DType::I1, "i1", 1},   {DType::Index, "index", 8}};

const Entry &entry(DType type) {
  for (const Entry &e : kTypes)
    if (e.type == type)
      return e;
  return kTypes[0];
}

uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

float bitsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
} // namespace

const char *dtypeName(DType type) { return entry(type).name; }

std::optional<DType> parseDType(const std::string &name) {
  for (const Entry &e : kTypes)
    if (name == e.name)
      return e.type;
  return std::nullopt;
}

int dtypeBytes(DType type) { return entry(type).bytes; }

uint16_t toBFloat16Bits(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest even on the 16 bits that are dropped.
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float fromBFloat16Bits(uint16_t bits) {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t toHalfBits(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) // NaN
    return sign | 0x7e00;
  if (magnitude >= 0x477ff000) // rounds to or beyond 65520: infinity
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // below the smallest normal half: subnormal
    // Scale into units of 2^-24 and round to nearest even.
    float scaled = bitsFloat(magnitude) * 16777216.0f;
    float rounded = std::nearbyint(scaled);
    return sign | static_cast<uint16_t>(rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round 13 dropped bits.
  uint32_t rebased = magnitude - (112u << 23);
  uint32_t rounding = 0xfff + ((rebased >> 13) & 1);
  return sign | static_cast<uint16_t>((rebased + rounding) >> 13);
}

float fromHalfBits(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) // zero or subnormal
    return (sign ? -1.0f : 1.0f) * static_cast<float>(mantissa) *
           5.9604644775390625e-8f;
  if (exponent == 31)
    return bitsFloat(sign | 0x7f800000 | (mantissa << 13));
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float narrowForHalf(double value) {
  // Round to odd: truncate toward zero and keep inexactness in the last
  // bit, so that rounding the float to 16 bits later rounds only once.
  float f = static_cast<float>(value);
  if (!std::isfinite(value) || static_cast<double>(f) == value)
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(value))
    f = std::nextafter(f, 0.0f);
  uint32_t bits = floatBits(f) | 1u;
  return bitsFloat(bits);
}

/// `value` truncated toward zero and wrapped to a signed integer of `bits`
/// bits (two's complement); non-finite values give 0.
int64_t wrapInteger(double value, int bits) {
  if (!std::isfinite(value))
    return 0;
  double t = std::trunc(value), half = std::ldexp(1.0, bits - 1);
  if (t >= -half && t < half)
    return static_cast<int64_t>(t);
  // Out of range: reduce modulo 2^bits (exact for these magnitudes).
  double wrapped = std::fmod(t, 2 * half);
  if (wrapped >= half)
    wrapped -= 2 * half;
  else if (wrapped < -half)
    wrapped += 2 * half;
  return static_cast<int64_t>(wrapped);
}

double roundTo(DType type, double value) {
  switch (type) {
  case DType::F64:
    return value;
  case DType::F32:
    return static_cast<float>(value);
  case DType::F16:
    return fromHalfBits(toHalfBits(narrowForHalf(value)));
  case DType::BF16:
    return fromBFloat16Bits(toBFloat16Bits(narrowForHalf(value)));
  case DType::I1:
    return value != 0 ? 1 : 0;
  case DType::I32:
    return static_cast<double>(wrapInteger(value, 32));
  case DType::I64:
  case DType::Index:
    return static_cast<double>(wrapInteger(value, 64));
  }
  return value;
}

double decodeElement(DType type, const unsigned char *p) {
  switch (type) {
  case DType::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::F16:
    return fromHalfBits(static_cast<uint16_t>(p[0] | (p[1] << 8)));
  case DType::BF16:
    return fromBFloat16Bits(static_cast<uint16_t>(p[0] | (p[1] << 8)));
  case DType::I64:
  case DType::Index: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I1:
    return p[0] ? 1 : 0;
  }
  return 0;
}

void encodeElement(DType type, double value, unsigned char *p) {
  switch (type) {
  case DType::F64:
    std::memcpy(p, &value, 8);
    return;
  case DType::F32: {
    float v = static_cast<float>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits = type == DType::F16 ? toHalfBits(narrowForHalf(value))
                                       : toBFloat16Bits(narrowForHalf(value));
    p[0] = bits & 0xff;
    p[1] = bits >> 8;
    return;
  }
  case DType::I64:
  case DType::Index: {
    int64_t v = wrapInteger(value, 64);
    std::memcpy(p, &v, 8);
    return;
  }
  case DType::I32: {
    int32_t v = static_cast<int32_t>(wrapInteger(value, 32));
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::I1:
    p[0] = value != 0;
    return;
  }
}

} // namespace ein
