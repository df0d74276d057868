// Integer sets: interval evaluation of expressions over ranged variables, union/intersection,
// covering ranges and buffer-access regions, plus a randomized soundness check that every value
// an expression takes lies in its evaluated set.
#include "tirtune/arith/int_set.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/support/error.h"

namespace tirtune::arith {
namespace {

std::string Show(const IntSet& s) {
  if (s.IsNothing()) return "{}";
  return "[" + (s.HasLowerBound() ? ToString(s.min()) : std::string("-inf")) + ", " +
         (s.HasUpperBound() ? ToString(s.max()) : std::string("+inf")) + "]";
}

bool SameEnd(const Expr& a, const Expr& b) {
  return a.defined() == b.defined() && (!a.defined() || StructuralEqual(a, b));
}

struct SetCase {
  Expr input;
  Expr min, max;  // undefined: unbounded
};

class IntSetTest : public ::testing::Test {
 protected:
  void Dom(const Var& v, Expr min, Expr extent) { doms_[v] = Range::FromMinExtent(min, extent); }

  void CheckAll(const std::vector<SetCase>& cases) {
    for (const SetCase& c : cases) {
      IntSet s = EvalSet(c.input, doms_, &analyzer_);
      IntSet want = IntSet::Interval(c.min, c.max);
      EXPECT_TRUE(!s.IsNothing() && SameEnd(s.min(), c.min) && SameEnd(s.max(), c.max))
          << "\n  input:    " << ToString(c.input) << "\n  output:   " << Show(s)
          << "\n  expected: " << Show(want);
    }
  }

  Analyzer analyzer_;
  VarRangeMap doms_;
  Var x{"x"}, y{"y"}, i{"i"}, j{"j"}, k{"k"}, n{"n"}, m{"m"};
};

TEST_F(IntSetTest, ConstantIntervals) {
  Dom(x, 0, 8);
  Dom(y, 0, 4);
  CheckAll({
      {x * 4 + y, 0, 31},
      {x - y, -3, 7},
      {x * -2, -14, 0},
      {x + x, 0, 14},
      {x - x, 0, 0},
      {FloorDiv(x, 2), 0, 3},
      {FloorDiv(x - 5, 2), -3, 1},
      {x / 2, 0, 3},
      {FloorMod(x, 4), 0, 3},
      {FloorMod(x + 8, 16), 8, 15},
      {FloorMod(x, 16), 0, 7},
      {Min(x, y), 0, 3},
      {Max(x, 5), 5, 7},
      {Select(x < y, x, y + 10), 0, 13},
      {x * y, 0, 21},
      {MakeCast(DataType::Int(64), MakeCast(DataType::Int(32), x)), Expr(), Expr()},
  });
}

TEST_F(IntSetTest, PointsAndFreeSymbols) {
  Dom(x, 0, 8);
  CheckAll({
      {n * 2 + 1, n * 2 + 1, n * 2 + 1},
      {x + n, n, n + 7},
      {Expr(5), 5, 5},
  });
  EXPECT_TRUE(EvalSet(n, doms_, &analyzer_).IsSinglePoint());
}

TEST_F(IntSetTest, SymbolicDomains) {
  Dom(x, 0, n);
  Dom(y, 0, 4);
  CheckAll({
      {x + 1, 1, n},
      {x * 4 + y, 0, n * 4 - 1},
      {FloorDiv(x, 4), 0, FloorDiv(n + 3, 4) - 1},
  });
}

TEST_F(IntSetTest, MultiplyByValueOfKnownSign) {
  Dom(x, 0, 8);
  analyzer_.Bind(m, Range::FromMinExtent(1, 100));
  CheckAll({
      {x * m, 0, m * 7},
      {FloorDiv(x, m), 0, FloorDiv(7, m)},
      // n may be negative or zero: nothing is known.
      {x * n, Expr(), Expr()},
  });
}

TEST_F(IntSetTest, UnknownOperationsWiden) {
  Buffer a("A", DataType::Int(64), {16});
  Dom(x, 0, 8);
  CheckAll({
      {MakeBufferLoad(a, {x}), Expr(), Expr()},
      {MakeBufferLoad(a, {n}), MakeBufferLoad(a, {n}), MakeBufferLoad(a, {n})},
  });
}

TEST_F(IntSetTest, UnionAndIntersect) {
  IntSet a = IntSet::Interval(0, 3), b = IntSet::Interval(5, 9);
  IntSet u = Union(a, b, &analyzer_);
  EXPECT_TRUE(IsConstInt(u.min(), 0) && IsConstInt(u.max(), 9)) << Show(u);
  IntSet c = Intersect(IntSet::Interval(0, 5), IntSet::Interval(3, 9), &analyzer_);
  EXPECT_TRUE(IsConstInt(c.min(), 3) && IsConstInt(c.max(), 5)) << Show(c);
  EXPECT_TRUE(Intersect(a, b, &analyzer_).IsNothing());
  EXPECT_TRUE(Union(IntSet::Nothing(), a, &analyzer_).IsSinglePoint() == false);
  IntSet un = Union(IntSet::Nothing(), a, &analyzer_);
  EXPECT_TRUE(IsConstInt(un.min(), 0) && IsConstInt(un.max(), 3)) << Show(un);
  EXPECT_TRUE(Union(a, IntSet::Everything(), &analyzer_).IsEverything());
  IntSet half = Intersect(IntSet::Interval(Expr(), 10), IntSet::Interval(2, Expr()), &analyzer_);
  EXPECT_TRUE(IsConstInt(half.min(), 2) && IsConstInt(half.max(), 10)) << Show(half);
  IntSet sym = Union(IntSet::Point(n), IntSet::Point(n + 4), &analyzer_);
  EXPECT_TRUE(StructuralEqual(sym.min(), n) && StructuralEqual(sym.max(), n + 4)) << Show(sym);
}

TEST_F(IntSetTest, CoverRange) {
  IntSet s = IntSet::Interval(n * 4, n * 4 + 3);
  std::optional<Range> r = s.CoverRange(&analyzer_);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(StructuralEqual(r->min, n * 4) && IsConstInt(r->extent, 4));
  EXPECT_FALSE(IntSet::Interval(0, Expr()).CoverRange(&analyzer_).has_value());
  EXPECT_TRUE(IsConstInt(IntSet::Nothing().CoverRange(&analyzer_)->extent, 0));
  EXPECT_TRUE(IsConstInt(IntSet::Point(n).CoverRange(&analyzer_)->extent, 1));
}

TEST_F(IntSetTest, EvalRegionOfTiledAccess) {
  Var io("io");  // an outer loop, fixed for the region
  Dom(i, 0, 8);
  Dom(j, 0, 4);
  Dom(k, 0, 16);
  std::vector<Range> region = EvalRegion({io * 32 + i * 4 + j, k}, doms_, &analyzer_);
  ASSERT_EQ(region.size(), 2u);
  EXPECT_TRUE(StructuralEqual(region[0].min, io * 32)) << ToString(region[0].min);
  EXPECT_TRUE(IsConstInt(region[0].extent, 32)) << ToString(region[0].extent);
  EXPECT_TRUE(IsConstInt(region[1].min, 0) && IsConstInt(region[1].extent, 16));
}

TEST_F(IntSetTest, EvalRegionOfSplitIndex) {
  Dom(i, 0, 4);
  std::vector<Range> region = EvalRegion({FloorDiv(n * 4 + i, 2)}, doms_, &analyzer_);
  EXPECT_TRUE(StructuralEqual(region[0].min, n * 2)) << ToString(region[0].min);
  EXPECT_TRUE(IsConstInt(region[0].extent, 2)) << ToString(region[0].extent);
}

TEST_F(IntSetTest, UnboundedIndexFallsBackToWholeBuffer) {
  Buffer idx("Idx", DataType::Int(64), {8});
  Buffer a("A", DataType::Float(32), {64, 16});
  Dom(i, 0, 8);
  std::vector<Expr> indices = {MakeBufferLoad(idx, {i}), i};
  EXPECT_THROW(EvalRegion(indices, doms_, &analyzer_), InternalError);
  BufferRegion r = EvalBufferRegion(a, indices, doms_, &analyzer_);
  EXPECT_TRUE(IsConstInt(r.region[0].min, 0) && IsConstInt(r.region[0].extent, 64));
  EXPECT_TRUE(IsConstInt(r.region[1].min, 0) && IsConstInt(r.region[1].extent, 8));
}

// Every value the expression takes over the domain lies inside the evaluated set.
TEST(IntSetRandom, EvaluatedSetHoldsEveryValue) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  Var x("x"), y("y");
  std::function<Expr(int)> gen = [&](int depth) -> Expr {
    if (depth == 0 || pick(4) == 0)
      return pick(3) == 0 ? Expr(pick(11) - 5) : Expr(pick(2) ? x : y);
    Expr a = gen(depth - 1);
    switch (pick(9)) {
      case 0:
        return MakeBinary(NodeKind::kAdd, a, gen(depth - 1));
      case 1:
        return MakeBinary(NodeKind::kSub, a, gen(depth - 1));
      case 2:
        return MakeBinary(NodeKind::kMul, a, Expr(pick(7) - 3));
      case 3:
        return MakeBinary(NodeKind::kMul, a, gen(depth - 1));
      case 4:
        return MakeBinary(NodeKind::kFloorDiv, a, Expr(pick(5) + 1));
      case 5:
        return MakeBinary(NodeKind::kFloorMod, a, Expr(pick(5) + 1));
      case 6:
        return MakeBinary(pick(2) ? NodeKind::kMin : NodeKind::kMax, a, gen(depth - 1));
      case 7:
        return MakeSelect(a < gen(depth - 1), a, gen(depth - 1));
      default:
        return MakeBinary(NodeKind::kDiv, a, Expr(pick(4) + 1));
    }
  };
  Analyzer analyzer;
  int checked = 0;
  for (int iter = 0; iter < 400; ++iter) {
    int64_t x0 = pick(9) - 4, xn = pick(6) + 1, y0 = pick(9) - 4, yn = pick(6) + 1;
    VarRangeMap doms = {{x, Range::FromMinExtent(x0, xn)}, {y, Range::FromMinExtent(y0, yn)}};
    Expr e = gen(4);
    IntSet s = EvalSet(e, doms, &analyzer);
    ASSERT_FALSE(s.IsNothing());
    const int64_t* lo = s.HasLowerBound() ? AsConstInt(s.min()) : nullptr;
    const int64_t* hi = s.HasUpperBound() ? AsConstInt(s.max()) : nullptr;
    ASSERT_TRUE(!s.HasLowerBound() || lo) << Show(s);
    ASSERT_TRUE(!s.HasUpperBound() || hi) << Show(s);
    for (int64_t a = x0; a < x0 + xn; ++a) {
      for (int64_t b = y0; b < y0 + yn; ++b) {
        Expr v = analyzer.Simplify(Substitute(e, VarMap{{x.get(), Expr(a)}, {y.get(), Expr(b)}}));
        const int64_t* value = AsConstInt(v);
        ASSERT_TRUE(value) << ToString(v);
        EXPECT_TRUE((!lo || *lo <= *value) && (!hi || *value <= *hi))
            << "x=" << a << " y=" << b << " value " << *value << " outside " << Show(s) << " of "
            << ToString(e);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace tirtune::arith
