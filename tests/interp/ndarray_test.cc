// NDArray: storage, element access for every dtype, half/bfloat16 rounding corner cases, and the
// platform-independent random fill.
#include "tirtune/support/ndarray.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tirtune {
namespace {

TEST(NDArray, EmptyIsZeroedAndAligned) {
  NDArray a = NDArray::Empty({3, 5}, DataType::Float(32));
  EXPECT_EQ(a.size(), 15);
  EXPECT_EQ(a.nbytes(), 60);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw()) % 64, 0u);
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.GetDouble(i), 0.0);
  NDArray scalar = NDArray::Empty({}, DataType::Int(8));
  EXPECT_EQ(scalar.size(), 1);
}

TEST(NDArray, CopyIsDeepAndSharingIsShallow) {
  NDArray a = NDArray::Empty({4}, DataType::Int(32));
  NDArray shared = a;
  NDArray copy = a.Copy();
  a.SetDouble(2, 7);
  EXPECT_EQ(shared.GetDouble(2), 7);
  EXPECT_EQ(copy.GetDouble(2), 0);
}

TEST(NDArray, SetAndGetEveryDtype) {
  struct Case {
    DataType dtype;
    double in;
    double out;
  };
  const Case cases[] = {
      {DataType::Bool(), 3.0, 1.0},
      {DataType::Int(8), -5.9, -5.0},
      {DataType::Int(8), 300.0, 127.0},  // saturates
      {DataType::Int(16), -40000.0, -32768.0},
      {DataType::Int(32), 123456789.0, 123456789.0},
      {DataType::Int(64), -1e15, -1e15},
      {DataType::UInt(8), -3.0, 0.0},
      {DataType::UInt(16), 65535.0, 65535.0},
      {DataType::UInt(32), 4e9, 4e9},
      {DataType::UInt(64), 1e19, 1e19},
      {DataType::Float(16), 0.1, 0.0999755859375},
      {DataType::BFloat16(), 0.1, 0.10009765625},
      {DataType::Float(32), 0.1, static_cast<double>(0.1f)},
      {DataType::Float(64), 0.1, 0.1},
  };
  for (const Case& c : cases) {
    NDArray a = NDArray::Empty({2}, c.dtype);
    a.SetDouble(1, c.in);
    EXPECT_EQ(a.GetDouble(1), c.out) << c.dtype.str();
    EXPECT_EQ(a.GetDouble(0), 0.0) << c.dtype.str();
  }
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(2049.0f), 0x6800);   // tie between 2048 and 2050: even is 2048
  EXPECT_EQ(FloatToHalf(2051.0f), 0x6802);   // tie between 2050 and 2052: even is 2052
  EXPECT_EQ(FloatToHalf(2049.5f), 0x6801);   // above the tie
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);  // below the halfway point to 2^16
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // halfway rounds to even: infinity
}

TEST(Half, SubnormalsAndZero) {
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);     // tie with zero: even
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);     // above the tie
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);     // 1.5 units: tie to even 2
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up into the normals
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);     // smallest normal
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
}

TEST(Half, InfinityAndNan) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToHalf(kInf), 0x7c00);
  EXPECT_EQ(FloatToHalf(-kInf), 0xfc00);
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(HalfToFloat(0x7c00), kInf);
  EXPECT_EQ(HalfToFloat(0xfc00), -kInf);
  uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(HalfToFloat(nan)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7c01)));  // a signalling-looking payload stays a nan
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << h;
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsSpecials) {
  auto bits = [](uint32_t u) { return std::bit_cast<float>(u); };
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(bits(0x3f808000)), 0x3f80);  // tie: even stays
  EXPECT_EQ(FloatToBFloat16(bits(0x3f818000)), 0x3f82);  // tie: odd rounds up
  EXPECT_EQ(FloatToBFloat16(bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_EQ(FloatToBFloat16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
  EXPECT_EQ(BFloat16ToFloat(0x3fc0), 1.5f);
}

TEST(FillRandom, IsSplitMix64AndIdenticalEverywhere) {
  // The first splitmix64 output for state 0 is 0xe220a8397b1dcdaf; float64 takes its top 53 bits.
  NDArray d = NDArray::Empty({2}, DataType::Float(64));
  d.FillRandom(/*seed=*/0, /*lo=*/0.0, /*hi=*/1.0);
  EXPECT_EQ(d.GetDouble(0), static_cast<double>(0xe220a8397b1dcdafULL >> 11) * 0x1p-53);
  EXPECT_EQ(d.GetDouble(1), 0x1.b9e279aa86e58p-2);

  NDArray f = NDArray::Empty({4}, DataType::Float(32));
  f.FillRandom(/*seed=*/42);
  EXPECT_EQ(f.data<float>()[0], 0x1.eeb99p-2f);
  EXPECT_EQ(f.data<float>()[1], -0x1.5c4074p-1f);
  EXPECT_EQ(f.data<float>()[2], -0x1.c56cc8p-2f);
  EXPECT_EQ(f.data<float>()[3], -0x1.3f18f8p-2f);

  NDArray h = NDArray::Empty({3}, DataType::Float(16));
  h.FillRandom(/*seed=*/5);
  EXPECT_EQ(h.GetDouble(0), -0.2265625);
  EXPECT_EQ(h.GetDouble(1), 0.50390625);
  EXPECT_EQ(h.GetDouble(2), -0.53515625);

  NDArray n = NDArray::Empty({8}, DataType::Int(32));
  n.FillRandom(/*seed=*/3, /*lo=*/-4, /*hi=*/4);
  EXPECT_EQ(n.data<int32_t>()[0], 1);
  EXPECT_EQ(n.data<int32_t>()[1], -3);
  EXPECT_EQ(n.data<int32_t>()[7], 2);
}

TEST(FillRandom, SameSeedSameValuesAndHalfOpenRange) {
  for (DataType t : {DataType::Float(32), DataType::Float(16), DataType::BFloat16(),
                     DataType::Float(64), DataType::Int(8), DataType::UInt(8)}) {
    NDArray a = NDArray::Empty({1000}, t), b = NDArray::Empty({1000}, t);
    a.FillRandom(9, -2, 3);
    b.FillRandom(9, -2, 3);
    ASSERT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << t.str();
    for (int64_t i = 0; i < a.size(); ++i) {
      double lo = t.is_uint() ? 0 : -2;
      ASSERT_GE(a.GetDouble(i), lo) << t.str();
      ASSERT_LT(a.GetDouble(i), 3) << t.str();
    }
  }
  NDArray a = NDArray::Empty({16}, DataType::Float(32)),
          b = NDArray::Empty({16}, DataType::Float(32));
  a.FillRandom(1);
  b.FillRandom(2);
  EXPECT_NE(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
}

}  // namespace
}  // namespace tirtune
