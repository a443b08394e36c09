//===- DTypeTest.cpp - Element types and rounding
//--------------------------===//

#include "ein/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ein;

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                  DType::I32, DType::I1, DType::Index})
    EXPECT_EQ(parseDType(dtypeName(t)), t);
  EXPECT_FALSE(parseDType("f8"));
  EXPECT_EQ(dtypeBytes(DType::BF16), 2);
}

TEST(DType, HalfBits) {
  EXPECT_EQ(toHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(toHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(toHalfBits(65504.0f), 0x7bff); // the largest half
  EXPECT_EQ(toHalfBits(65520.0f), 0x7c00); // rounds up to infinity
  EXPECT_EQ(toHalfBits(5.9604644775390625e-8f), 0x0001); // smallest subnormal
  EXPECT_EQ(toHalfBits(2.0e-8f), 0x0000);                // below half of it
  EXPECT_EQ(toHalfBits(std::numeric_limits<float>::quiet_NaN()) & 0x7c00,
            0x7c00);
  // Ties go to even: 2049 sits between 2048 and 2050.
  EXPECT_EQ(fromHalfBits(toHalfBits(2049.0f)), 2048.0f);
  EXPECT_EQ(fromHalfBits(toHalfBits(2051.0f)), 2052.0f);
  for (uint32_t bits = 0; bits < 0x7c00; bits += 7)
    EXPECT_EQ(toHalfBits(fromHalfBits(static_cast<uint16_t>(bits))), bits);
}

TEST(DType, BFloat16Bits) {
  EXPECT_EQ(toBFloat16Bits(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(fromBFloat16Bits(toBFloat16Bits(1.00390625f)), 1.0f);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6.
  EXPECT_EQ(fromBFloat16Bits(toBFloat16Bits(1.01171875f)), 1.015625f);
  EXPECT_TRUE(std::isnan(fromBFloat16Bits(
      toBFloat16Bits(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, RoundTo) {
  EXPECT_EQ(roundTo(DType::BF16, 3.14159), 3.140625);
  EXPECT_EQ(roundTo(DType::F16, 3.14159), 3.140625);
  EXPECT_EQ(roundTo(DType::F32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(roundTo(DType::I32, -2.7), -2);
  EXPECT_EQ(roundTo(DType::I1, 0.5), 1);
}

TEST(DType, RoundsOnceFromDouble) {
  // Just above a tie between two bf16 (f16) values: going through float
  // first would land on the tie and round to even; one rounding goes up.
  EXPECT_EQ(
      roundTo(DType::BF16, 1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)),
      1.0078125);
  EXPECT_EQ(
      roundTo(DType::F16, 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
      1.0009765625);
  EXPECT_EQ(roundTo(DType::BF16, 1 + std::ldexp(1.0, -8)), 1.0); // a true tie
}

TEST(DType, IntegersWrap) {
  EXPECT_EQ(wrapInteger(4294967296.0 + 5, 32), 5);
  EXPECT_EQ(wrapInteger(2147483648.0, 32), -2147483648LL);
  EXPECT_EQ(wrapInteger(std::ldexp(1.0, 63), 64), INT64_MIN);
  EXPECT_EQ(wrapInteger(-7.9, 64), -7);
  EXPECT_EQ(wrapInteger(std::numeric_limits<double>::infinity(), 64), 0);
  EXPECT_EQ(roundTo(DType::I32, 1e30),
            static_cast<double>(wrapInteger(1e30, 32)));
}
