// What the interpreter computes for each kind of expression: integer wrap-around, division
// rounding, float32 rounding, float16 storage, select, let, if/else, casts and intrinsics.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "block_builder.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune {
namespace {

using namespace test_ir;  // NOLINT(google-build-using-namespace): test shorthands

const DataType kF32 = DataType::Float(32);

// out[i] = fn(A[i], B[i]) over n elements of `in_type`, as a lowered loop.
PrimFunc Elementwise(int64_t n, DataType in_type, DataType out_type,
                     const std::function<Expr(Expr, Expr, Var)>& fn) {
  Buffer a("A", in_type, {n}), b("B", in_type, {n}), out("Out", out_type, {n});
  Var i("i");
  return PrimFunc("elementwise", {a, b, out},
                  Loop(i, n, Store(out, fn(Load(a, {i}), Load(b, {i}), i), {i})));
}

std::vector<double> RunElementwise(const PrimFunc& f, DataType in_type, DataType out_type,
                                   const std::vector<double>& a, const std::vector<double>& b) {
  int64_t n = static_cast<int64_t>(a.size());
  NDArray out = NDArray::Empty({n}, out_type);
  Interpret(f, {ArrayOf({n}, in_type, a), ArrayOf({n}, in_type, b), out});
  return Values(out);
}

TEST(Arithmetic, SignedIntegersWrapToTheirWidth) {
  DataType i8 = DataType::Int(8);
  PrimFunc f = Elementwise(3, i8, i8, [](Expr a, Expr, Var) { return a * 2 + 1; });
  EXPECT_EQ(RunElementwise(f, i8, i8, {127, -128, 100}, {0, 0, 0}),
            (std::vector<double>{-1, 1, -55}));

  DataType i32 = DataType::Int(32);
  PrimFunc g = Elementwise(1, i32, i32, [](Expr a, Expr b, Var) { return a + b; });
  EXPECT_EQ(RunElementwise(g, i32, i32, {2147483647}, {1}), (std::vector<double>{-2147483648.0}));
}

TEST(Arithmetic, UnsignedIntegersWrapAndCompareUnsigned) {
  DataType u8 = DataType::UInt(8);
  PrimFunc f = Elementwise(2, u8, u8, [](Expr a, Expr b, Var) { return a - b; });
  EXPECT_EQ(RunElementwise(f, u8, u8, {0, 3}, {1, 200}), (std::vector<double>{255, 59}));
  PrimFunc lt = Elementwise(1, u8, DataType::Bool(), [](Expr a, Expr b, Var) { return a < b; });
  EXPECT_EQ(RunElementwise(lt, u8, DataType::Bool(), {200}, {3}), (std::vector<double>{0}));
}

TEST(Arithmetic, FloorDivAndFloorModRoundTowardNegativeInfinity) {
  DataType i32 = DataType::Int(32);
  std::vector<double> a = {-7, 7, -7, 7}, b = {2, -2, -2, 2};
  auto floordiv = Elementwise(4, i32, i32, [](Expr x, Expr y, Var) { return FloorDiv(x, y); });
  auto floormod = Elementwise(4, i32, i32, [](Expr x, Expr y, Var) { return FloorMod(x, y); });
  auto div = Elementwise(4, i32, i32, [](Expr x, Expr y, Var) { return x / y; });
  EXPECT_EQ(RunElementwise(floordiv, i32, i32, a, b), (std::vector<double>{-4, -4, 3, 3}));
  EXPECT_EQ(RunElementwise(floormod, i32, i32, a, b), (std::vector<double>{1, -1, -1, 1}));
  EXPECT_EQ(RunElementwise(div, i32, i32, a, b), (std::vector<double>{-3, -3, 3, 3}));
}

TEST(Arithmetic, Float32ResultsAreRoundedAfterEveryOperation) {
  // (1 + 2^-30) - 1 is 0 in float32 (and 2^-30 in double).
  PrimFunc f = Elementwise(1, kF32, kF32, [](Expr a, Expr b, Var) { return (a + b) - a; });
  EXPECT_EQ(RunElementwise(f, kF32, kF32, {1.0}, {std::ldexp(1.0, -30)}),
            (std::vector<double>{0.0}));
  DataType f64 = DataType::Float(64);
  PrimFunc g = Elementwise(1, f64, f64, [](Expr a, Expr b, Var) { return (a + b) - a; });
  EXPECT_EQ(RunElementwise(g, f64, f64, {1.0}, {std::ldexp(1.0, -30)}),
            (std::vector<double>{std::ldexp(1.0, -30)}));
}

TEST(Arithmetic, Float16IsComputedInFloat32AndRoundedOnStore) {
  DataType f16 = DataType::Float(16);
  PrimFunc f = Elementwise(3, f16, f16, [](Expr a, Expr b, Var) { return a * b + a; });
  std::vector<double> a = {0.1, 3.0, 300.0}, b = {0.3, 1.0 / 3, 300.0};
  std::vector<double> got = RunElementwise(f, f16, f16, a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    float x = HalfToFloat(FloatToHalf(static_cast<float>(a[i])));
    float y = HalfToFloat(FloatToHalf(static_cast<float>(b[i])));
    EXPECT_EQ(got[i], HalfToFloat(FloatToHalf(x * y + x))) << i;
  }
  EXPECT_TRUE(std::isinf(got[2]));  // 90300 overflows float16
}

TEST(Arithmetic, CastsTruncateWrapAndSaturate) {
  DataType i8 = DataType::Int(8);
  PrimFunc f = Elementwise(4, kF32, i8, [&](Expr a, Expr, Var) { return Cast(i8, a); });
  EXPECT_EQ(RunElementwise(f, kF32, i8, {-2.7, 2.7, 1000, -1000}, {0, 0, 0, 0}),
            (std::vector<double>{-2, 2, 127, -128}));
  DataType i32 = DataType::Int(32);
  PrimFunc g = Elementwise(1, i32, i8, [&](Expr a, Expr, Var) { return Cast(i8, a); });
  EXPECT_EQ(RunElementwise(g, i32, i8, {300}, {0}), (std::vector<double>{44}));
}

TEST(Arithmetic, SelectChoosesPerElement) {
  PrimFunc relu =
      Elementwise(3, kF32, kF32, [](Expr a, Expr, Var) { return Select(a > 0.0f, a, Expr(0.0f)); });
  EXPECT_EQ(RunElementwise(relu, kF32, kF32, {-1, 0.5, 2}, {0, 0, 0}),
            (std::vector<double>{0, 0.5, 2}));
}

TEST(Arithmetic, LetBindsAValueForItsBody) {
  Var x("x", kF32);
  PrimFunc f =
      Elementwise(2, kF32, kF32, [&](Expr a, Expr b, Var) { return MakeLet(x, a + b, x * x); });
  EXPECT_EQ(RunElementwise(f, kF32, kF32, {1, 2}, {2, 3}), (std::vector<double>{9, 25}));
}

TEST(Arithmetic, IfThenElseAndLetStmt) {
  // for i: let t = i * 3 in if i < 2: B[i] = t else: B[i] = -t
  Buffer b("B", kF32, {4});
  Var i("i"), t("t");
  Expr tf = Cast(kF32, t);
  Stmt body = MakeLetStmt(t, i * 3,
                          MakeIfThenElse(i < 2, Store(b, tf, {i}), Store(b, Expr(0.0f) - tf, {i})));
  PrimFunc f("branches", {b}, Loop(i, 4, body));
  NDArray out = NDArray::Empty({4}, kF32);
  Interpret(f, {out});
  EXPECT_EQ(Values(out), (std::vector<double>{0, 3, -6, -9}));
}

TEST(Arithmetic, IntrinsicsComputeInDoubleAndRoundToFloat) {
  PrimFunc f = Elementwise(
      2, kF32, kF32, [](Expr a, Expr, Var) { return Sigmoid(a) + Rsqrt(a * a + 1.0f) + Exp(a); });
  std::vector<double> in = {0.5, -2.0};
  std::vector<double> got = RunElementwise(f, kF32, kF32, in, {0, 0});
  for (size_t i = 0; i < in.size(); ++i) {
    double a = in[i];
    float s = static_cast<float>(1.0 / (1.0 + std::exp(-a)));
    float sq = static_cast<float>(static_cast<float>(a * a) + 1.0f);
    float r = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sq)));
    float e = static_cast<float>(std::exp(a));
    EXPECT_EQ(got[i], static_cast<float>(static_cast<float>(s + r) + e)) << i;
  }
}

TEST(Arithmetic, ComparisonsAndLogicOnVectors) {
  // Out[0:4] = select(A[0:4] >= 2 and not (A[0:4] == 3), A, -1)
  Buffer a("A", kF32, {4}), out("Out", kF32, {4});
  Expr idx = MakeRamp(Expr(0), Expr(1), 4);
  Expr v = Load(a, {idx});
  Expr cond = v >= MakeBroadcast(Expr(2.0f), 4) && !Eq(v, MakeBroadcast(Expr(3.0f), 4));
  PrimFunc f("vector_logic", {a, out},
             Store(out, Select(cond, v, MakeBroadcast(Expr(-1.0f), 4)), {idx}));
  NDArray result = NDArray::Empty({4}, kF32);
  Interpret(f, {ArrayOf({4}, kF32, {1, 2, 3, 4}), result});
  EXPECT_EQ(Values(result), (std::vector<double>{-1, 2, -1, 4}));
}

}  // namespace
}  // namespace tirtune
