// CompareArrays: tolerances, NaN handling, and the message that names the bad element.
#include "tirtune/measure/verify.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tirtune {
namespace {

NDArray Vector(std::vector<double> values) {
  NDArray a = NDArray::Empty({static_cast<int64_t>(values.size())}, DataType::Float(32));
  for (size_t i = 0; i < values.size(); ++i) a.SetDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

TEST(CompareArrays, AcceptsRoundingDifferences) {
  VerifyResult r = CompareArrays("C", Vector({1.0, 100.0}), Vector({1.00001, 100.001}),
                                 Tolerance::For(DataType::Float(32)));
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_GT(r.max_abs_error, 0);
}

TEST(CompareArrays, NamesTheFirstBadElement) {
  VerifyResult r = CompareArrays("C", Vector({1.0, 2.0, 3.0}), Vector({1.0, 2.5, 4.0}),
                                 Tolerance::For(DataType::Float(32)));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_NE(r.message.find("C[1] is 2.5 where the reference has 2"), std::string::npos)
      << r.message;
}

TEST(CompareArrays, NanMatchesOnlyNan) {
  EXPECT_TRUE(CompareArrays("C", Vector({NAN}), Vector({NAN}), Tolerance{}).ok);
  EXPECT_FALSE(CompareArrays("C", Vector({NAN}), Vector({1.0}), Tolerance{}).ok);
  EXPECT_FALSE(CompareArrays("C", Vector({1.0}), Vector({NAN}), Tolerance{}).ok);
}

TEST(CompareArrays, ShapeMismatchFails) {
  EXPECT_FALSE(CompareArrays("C", Vector({1.0}), Vector({1.0, 2.0}), Tolerance{}).ok);
}

TEST(CompareAll, AFloat32SumOfAMillionTermsMayDifferByItsOrder) {
  // norm 1,1024,1024: a sequential float32 sum of a million squares against a blocked one.
  std::vector<NDArray> expected = {Vector({591.265380859375})};
  std::vector<NDArray> actual = {Vector({591.3796997070312})};  // rel. error 1.9e-4
  EXPECT_FALSE(CompareAll({"D"}, expected, actual).ok);
  EXPECT_TRUE(CompareAll({"D"}, expected, actual, 1024.0 * 1024).ok);
  // A short sum keeps the default tolerance, and a real error stays an error.
  EXPECT_FALSE(CompareAll({"D"}, expected, actual, 1024).ok);
  EXPECT_FALSE(CompareAll({"D"}, expected, {Vector({592.0})}, 1024.0 * 1024).ok);
}

}  // namespace
}  // namespace tirtune
