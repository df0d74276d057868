// The simplifier as a specification: tables of input and expected canonical output, the analyzer
// queries built on it, and a randomized differential test that evaluates random integer
// expressions before and after simplification.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tirtune/arith/analyzer.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune::arith {
namespace {

struct Case {
  Expr input;
  Expr expected;
};

class SimplifyTest : public ::testing::Test {
 protected:
  // Simplifies each input and compares with the expected form, printing all three on failure.
  void CheckAll(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
      Expr out = analyzer_.Simplify(c.input);
      EXPECT_TRUE(StructuralEqual(out, c.expected))
          << "\n  input:    " << ToString(c.input) << "\n  output:   " << ToString(out)
          << "\n  expected: " << ToString(c.expected);
    }
  }
  void Bind(const Var& v, int64_t min, int64_t extent) {
    analyzer_.Bind(v, Range::FromMinExtent(min, extent));
  }

  Analyzer analyzer_;
  Var x{"x"}, y{"y"}, z{"z"}, i{"i"}, j{"j"}, k{"k"}, n{"n"};
};

TEST_F(SimplifyTest, FoldsConstants) {
  CheckAll({
      {MakeBinary(NodeKind::kAdd, Expr(3), Expr(4)), 7},
      {MakeBinary(NodeKind::kFloorDiv, Expr(-7), Expr(2)), -4},
      {MakeBinary(NodeKind::kFloorMod, Expr(-7), Expr(2)), 1},
      {MakeBinary(NodeKind::kDiv, Expr(-7), Expr(2)), -3},
      {MakeBinary(NodeKind::kMin, Expr(3), Expr(-2)), -2},
      {MakeBinary(NodeKind::kMul, Expr(2.5f), Expr(4.0f)), Expr(10.0f)},
      {MakeBinary(NodeKind::kLT, Expr(2), Expr(3)), Bool(true)},
      {MakeCast(DataType::Int(32), Expr(5)), IntImm(DataType::Int(32), 5)},
      {MakeCast(DataType::Float(32), Expr(3)), Expr(3.0f)},
      // A division by zero is left for the program to meet at run time.
      {MakeBinary(NodeKind::kFloorDiv, Expr(1), Expr(0)),
       MakeBinary(NodeKind::kFloorDiv, Expr(1), Expr(0))},
  });
}

TEST_F(SimplifyTest, LeavesFloatArithmeticAlone) {
  Var a("a", DataType::Float(32)), b("b", DataType::Float(32));
  CheckAll({
      // No reassociation: (a + b) - b is not a in floating point.
      {MakeBinary(NodeKind::kSub, a + b, b), MakeBinary(NodeKind::kSub, a + b, b)},
      {MakeBinary(NodeKind::kAdd, a, MakeBinary(NodeKind::kAdd, Expr(1.0f), Expr(2.0f))),
       MakeBinary(NodeKind::kAdd, a, Expr(3.0f))},
  });
}

TEST_F(SimplifyTest, CanonicalLinearForm) {
  CheckAll({
      {i * 4 + j - i * 4, j},
      {(x + 3) - 1, x + 2},
      {MakeBinary(NodeKind::kMul, Expr(2), x + 1), x * 2 + 2},
      {j + i * 4, i * 4 + j},
      {x - x, 0},
      {(x + y) - (y + x), 0},
      {x * 3 - x * 2 + 5 - 5, x},
      {y - x, y - x},
      {0 - x - y, x * -1 - y},
      {(x + 1) * 2 - x * 2, 2},
      {MakeBinary(NodeKind::kMul, x * 2, y * 3), x * y * 6},
      {MakeBinary(NodeKind::kMul, y, x) - x * y, 0},
  });
}

TEST_F(SimplifyTest, FloorDivPullsOutMultiples) {
  CheckAll({
      {FloorDiv(x * 8 + y, 8), x + FloorDiv(y, 8)},
      {FloorDiv(x * 8 + 17, 8), x + 2},
      {MakeBinary(NodeKind::kFloorDiv, x, Expr(1)), x},
      {FloorDiv(x * 4 + 2, 8), FloorDiv(x, 2)},
      {FloorDiv(FloorDiv(x, 4), 8), FloorDiv(x, 32)},
      {FloorDiv(FloorDiv(x, 4) + 1, 8), FloorDiv(x + 4, 32)},
      {FloorDiv(x * 6 + y * 9, 3), x * 2 + y * 3},
      {FloorDiv(FloorMod(x, 32), 4), FloorMod(FloorDiv(x, 4), 8)},
      // With a constant the carry matters: the low-first form stays.
      {FloorDiv(FloorMod(x, 32) + 1, 4), FloorDiv(FloorMod(x, 32) + 1, 4)},
  });
}

TEST_F(SimplifyTest, FloorDivUsesBounds) {
  Bind(y, 0, 8);
  Bind(i, 0, 16);
  CheckAll({
      {FloorDiv(x * 8 + y, 8), x},
      {FloorDiv(y, 8), 0},
      {FloorDiv(y + 8, 8), 1},
      {FloorDiv(i, 4), FloorDiv(i, 4)},
      {FloorDiv(i * 4 + y, 32), FloorDiv(i * 4 + y, 32)},
      {FloorDiv(i * 4 + 3, 64), 0},
  });
}

TEST_F(SimplifyTest, FloorModDropsMultiples) {
  CheckAll({
      {FloorMod(x * 8 + y, 8), FloorMod(y, 8)},
      {FloorMod(x * 9 + y * 16, 8), FloorMod(x * 9, 8)},
      {FloorMod(x * 8 + 17, 8), 1},
      {MakeBinary(NodeKind::kFloorMod, x, Expr(1)), 0},
      {FloorMod(x * 4 + 2, 8), FloorMod(x, 2) * 4 + 2},
      {FloorMod(FloorMod(x, 32), 8), FloorMod(x, 8)},
  });
}

TEST_F(SimplifyTest, FloorModUsesBounds) {
  Bind(y, 0, 8);
  CheckAll({
      {FloorMod(x * 8 + y, 8), y},
      {FloorMod(y + 8, 8), y},
      {FloorMod(y, 16), y},
  });
}

TEST_F(SimplifyTest, DivModPairRecombines) {
  CheckAll({
      {FloorDiv(x, 4) * 4 + FloorMod(x, 4), x},
      {FloorMod(x, 4) + FloorDiv(x, 4) * 4 + 1, x + 1},
      {(FloorDiv(x, 4) * 4 + FloorMod(x, 4)) * 3, x * 3},
      {FloorDiv(x + y, 8) * 8 + FloorMod(x + y, 8) - y, x},
      {FloorDiv(x, 4) * 2 + FloorDiv(FloorMod(x, 4), 2), FloorDiv(x, 2)},
      {FloorDiv(FloorMod(x, 16), 4) * 4 + FloorMod(x, 4), FloorMod(x, 16)},
      {FloorDiv(x, 64) * 4 + FloorMod(FloorDiv(x, 16), 4), FloorDiv(x, 16)},
      // Coefficients that do not match stay as they are.
      {FloorDiv(x, 4) * 2 + FloorMod(x, 4), FloorDiv(x, 4) * 2 + FloorMod(x, 4)},
  });
}

TEST_F(SimplifyTest, TruncDivOnNonNegativeIsFloorDiv) {
  Bind(i, 0, 64);
  CheckAll({
      {MakeBinary(NodeKind::kDiv, i * 8 + 3, Expr(8)), i},
      {MakeBinary(NodeKind::kDiv, x, Expr(1)), x},
      // Without a sign the truncating division stays.
      {MakeBinary(NodeKind::kDiv, x, Expr(8)), MakeBinary(NodeKind::kDiv, x, Expr(8))},
  });
}

TEST_F(SimplifyTest, MinMaxUseBounds) {
  Bind(i, 0, 10);
  CheckAll({
      {Min(i, 10), i},
      {Max(i, 10), 10},
      {Min(i, 5), Min(i, 5)},
      {Max(i, -1), i},
      {Min(x, x + 1), x},
      {Max(x + 3, x), x + 3},
      {Min(Min(x, 8), 4), Min(x, 4)},
      {Max(4, x), Max(x, 4)},
      {Min(y, x), Min(x, y)},
  });
}

TEST_F(SimplifyTest, ComparisonsUseBounds) {
  Bind(i, 0, 16);
  CheckAll({
      {i < 16, Bool(true)},
      {i >= 0, Bool(true)},
      {i < 0, Bool(false)},
      {i < 8, i < 8},
      {i <= 7, i < 8},
      {i > 7, 7 < i},
      {Eq(i, 16), Bool(false)},
      {Ne(i, 20), Bool(true)},
      {Eq(i * 2, 7), Bool(false)},
  });
}

TEST_F(SimplifyTest, ComparisonsCanonicalForm) {
  CheckAll({
      {x * 4 < 8, x < 2},
      {x * 4 < 9, x < 3},
      {x + 1 <= n, x < n},
      {x + 1 < n, x + 1 < n},
      {x < n + 2, x < n + 2},
      {x - 3 < 10, x < 13},
      {n > x, x < n},
      {Eq(x + 1, y + 1), Eq(x, y)},
      {Eq(x * 2, y * 2 + 4), Eq(x, y + 2)},
      {Ne(x - y, 0), Ne(x, y)},
      {Eq(x * 2, y * 2 + 1), Bool(false)},
      {x < x + 1, Bool(true)},
  });
}

TEST_F(SimplifyTest, BooleanLogic) {
  Bind(i, 0, 16);
  Expr p = x < y;
  CheckAll({
      {(i < 16) && p, p},
      {(i < 0) && p, Bool(false)},
      {(i < 0) || p, p},
      {(i < 16) || p, Bool(true)},
      {p && p, p},
      {p && MakeNot(p), Bool(false)},
      {p || MakeNot(p), Bool(true)},
      {MakeNot(MakeNot(p)), p},
      {MakeNot(x < y), y < x + 1},
      {MakeNot(Eq(x, y)), Ne(x, y)},
  });
}

TEST_F(SimplifyTest, SelectWithKnownCondition) {
  Bind(i, 0, 16);
  CheckAll({
      {Select(i < 16, x, y), x},
      {Select(i >= 16, x, y), y},
      {Select(x < y, x + 1, 1 + x), x + 1},
      {Select(x < y, x, y), Select(x < y, x, y)},
  });
}

TEST_F(SimplifyTest, LetBindsBoundsOfItsValue) {
  Bind(i, 0, 4);
  Var t("t");
  CheckAll({{MakeLet(t, i * 2, FloorDiv(t, 8)), MakeLet(t, i * 2, Expr(0))}});
}

TEST_F(SimplifyTest, Int32KeepsItsType) {
  DataType i32 = DataType::Int(32);
  Var a("a", i32), b("b", i32);
  Expr out = analyzer_.Simplify(a * 2 + b - a);
  EXPECT_EQ(out.dtype(), i32);
  EXPECT_TRUE(StructuralEqual(out, a + b)) << ToString(out);
}

TEST_F(SimplifyTest, NarrowIntegersAreOnlyFolded) {
  DataType i8 = DataType::Int(8);
  Var a("a", i8);
  Expr e =
      MakeBinary(NodeKind::kSub, MakeBinary(NodeKind::kAdd, a, IntImm(i8, 100)), IntImm(i8, 100));
  EXPECT_TRUE(StructuralEqual(analyzer_.Simplify(e), e));
  // 100 + 100 does not fit int8: no folding.
  Expr overflow = MakeBinary(NodeKind::kAdd, IntImm(i8, 100), IntImm(i8, 100));
  EXPECT_TRUE(StructuralEqual(analyzer_.Simplify(overflow), overflow));
}

TEST_F(SimplifyTest, SimplifyIsIdempotent) {
  Bind(y, 0, 8);
  for (const Expr& e : {FloorDiv(x * 8 + y, 8) + FloorMod(x * 9 + y, 8), (x + 1 <= n) && (x > 3),
                        Min(x * 2 + 1, y) - FloorDiv(FloorDiv(x, 4), 8)}) {
    Expr once = analyzer_.Simplify(e);
    Expr twice = analyzer_.Simplify(once);
    EXPECT_TRUE(StructuralEqual(once, twice)) << ToString(once) << " vs " << ToString(twice);
  }
}

// ---------------------------------------------------------------- analyzer queries

TEST_F(SimplifyTest, ConstIntBound) {
  Bind(i, 0, 16);
  Bind(j, -4, 8);
  auto bound = [&](const Expr& e) { return analyzer_.ConstIntBound(e); };
  EXPECT_EQ(bound(i), (IntBound{0, 15}));
  EXPECT_EQ(bound(i * 4 + j), (IntBound{-4, 63}));
  EXPECT_EQ(bound(i - j), (IntBound{-3, 19}));
  EXPECT_EQ(bound(FloorDiv(i, 4)), (IntBound{0, 3}));
  EXPECT_EQ(bound(FloorMod(j, 4)), (IntBound{0, 3}));
  EXPECT_EQ(bound(FloorMod(i, 32)), (IntBound{0, 15}));
  EXPECT_EQ(bound(Min(i, j)), (IntBound{-4, 3}));
  EXPECT_EQ(bound(Select(x < 0, i, j)), (IntBound{-4, 15}));
  EXPECT_EQ(bound(x), IntBound::Everything());
  EXPECT_EQ(bound(x + 1).max_value, IntBound::kPosInf);
  EXPECT_EQ(bound(FloorMod(x, 8)), (IntBound{0, 7}));
  EXPECT_EQ(bound(Var("w", DataType::Int(32))),
            (IntBound{-(int64_t{1} << 31), (int64_t{1} << 31) - 1}));
}

TEST_F(SimplifyTest, CanProve) {
  Bind(i, 0, 16);
  EXPECT_TRUE(analyzer_.CanProve(i < 16));
  EXPECT_TRUE(analyzer_.CanProve(i * 4 + 3 < 64));
  EXPECT_FALSE(analyzer_.CanProve(i < 15));
  EXPECT_FALSE(analyzer_.CanProve(x < 15));
  EXPECT_TRUE(analyzer_.CanProveEqual(FloorDiv(x, 4) * 4 + FloorMod(x, 4), x));
  EXPECT_TRUE(analyzer_.CanProveEqual(FloorMod(i, 16), i));
  EXPECT_FALSE(analyzer_.CanProveEqual(x, y));
  analyzer_.Unbind(i);
  EXPECT_FALSE(analyzer_.CanProve(i < 16));
}

TEST_F(SimplifyTest, BindWithSymbolicRangeKeepsKnownEnd) {
  analyzer_.Bind(i, Range::FromMinExtent(0, n));
  EXPECT_TRUE(analyzer_.CanProve(i >= 0));
  EXPECT_FALSE(analyzer_.CanProve(i < 100));
}

// ---------------------------------------------------------------- randomized differential test

// A tiny reference evaluator for the integer/bool fragment the generator produces. nullopt means
// the expression is undefined at that point (division by zero).
std::optional<int64_t> Eval(const Expr& e, const std::function<int64_t(const VarNode*)>& env) {
  if (const int64_t* c = AsConstInt(e)) return *c;
  if (const auto* v = e.as<VarNode>()) return env(v);
  if (const auto* n = e.as<NotNode>()) {
    auto a = Eval(n->a, env);
    return a ? std::optional<int64_t>(!*a) : std::nullopt;
  }
  if (const auto* s = e.as<SelectNode>()) {
    auto c = Eval(s->cond, env), t = Eval(s->t, env), f = Eval(s->f, env);
    if (!c || !t || !f) return std::nullopt;
    return *c ? *t : *f;
  }
  if (const auto* l = e.as<LetNode>()) {
    auto v = Eval(l->value, env);
    if (!v) return std::nullopt;
    const VarNode* var = l->var.get();
    int64_t value = *v;
    return Eval(l->body, [&](const VarNode* u) { return u == var ? value : env(u); });
  }
  if (!IsBinaryOpKind(e->kind())) return std::nullopt;
  auto a = Eval(BinaryA(e.get()), env), b = Eval(BinaryB(e.get()), env);
  if (!a || !b) return std::nullopt;
  int64_t u = *a, w = *b;
  auto floordiv = [](int64_t p, int64_t q) {
    int64_t r = p / q;
    return (p % q != 0 && ((p < 0) != (q < 0))) ? r - 1 : r;
  };
  int64_t r;
  switch (e->kind()) {
    // An overflow makes the point unusable, like a division by zero.
    case NodeKind::kAdd:
      return __builtin_add_overflow(u, w, &r) ? std::nullopt : std::optional<int64_t>(r);
    case NodeKind::kSub:
      return __builtin_sub_overflow(u, w, &r) ? std::nullopt : std::optional<int64_t>(r);
    case NodeKind::kMul:
      return __builtin_mul_overflow(u, w, &r) ? std::nullopt : std::optional<int64_t>(r);
    case NodeKind::kDiv:
      return w == 0 ? std::nullopt : std::optional<int64_t>(u / w);
    case NodeKind::kFloorDiv:
      return w == 0 ? std::nullopt : std::optional<int64_t>(floordiv(u, w));
    case NodeKind::kFloorMod:
      return w == 0 ? std::nullopt : std::optional<int64_t>(u - floordiv(u, w) * w);
    case NodeKind::kMin:
      return std::min(u, w);
    case NodeKind::kMax:
      return std::max(u, w);
    case NodeKind::kEQ:
      return u == w;
    case NodeKind::kNE:
      return u != w;
    case NodeKind::kLT:
      return u < w;
    case NodeKind::kLE:
      return u <= w;
    case NodeKind::kGT:
      return u > w;
    case NodeKind::kGE:
      return u >= w;
    case NodeKind::kAnd:
      return u && w;
    case NodeKind::kOr:
      return u || w;
    default:
      return std::nullopt;
  }
}

class ExprGenerator {
 public:
  ExprGenerator(std::mt19937_64* rng, std::vector<Var> vars) : rng_(*rng), vars_(std::move(vars)) {}

  Expr Int(int depth) {
    if (depth == 0 || Pick(5) == 0) {
      return Pick(3) == 0 ? Expr(Pick(19) - 9) : Expr(vars_[Pick(vars_.size())]);
    }
    Expr a = Int(depth - 1);
    switch (Pick(14)) {
      case 12:
      case 13:
        return Digits(a);
      case 0:
      case 1:
        return MakeBinary(NodeKind::kAdd, a, Int(depth - 1));
      case 2:
      case 3:
        return MakeBinary(NodeKind::kSub, a, Int(depth - 1));
      case 4:
        return MakeBinary(NodeKind::kMul, a, Expr(Pick(9) - 4));
      case 5:
        return MakeBinary(NodeKind::kMul, a, Int(depth - 1));
      case 6:
        return MakeBinary(NodeKind::kFloorDiv, a, Expr(Divisor()));
      case 7:
        return MakeBinary(NodeKind::kFloorMod, a, Expr(Divisor()));
      case 8:
        return MakeBinary(NodeKind::kDiv, a, Expr(Divisor()));
      case 9:
        return MakeBinary(Pick(2) ? NodeKind::kMin : NodeKind::kMax, a, Int(depth - 1));
      case 10:
        return MakeSelect(Bool(depth - 1), a, Int(depth - 1));
      default:
        return MakeBinary(NodeKind::kFloorDiv, a, Expr(vars_.back()));  // z >= 1
    }
  }

  Expr Bool(int depth) {
    static constexpr NodeKind kCmp[] = {NodeKind::kEQ, NodeKind::kNE, NodeKind::kLT,
                                        NodeKind::kLE, NodeKind::kGT, NodeKind::kGE};
    switch (depth == 0 ? 0 : Pick(5)) {
      case 1:
        return MakeBinary(NodeKind::kAnd, Bool(depth - 1), Bool(depth - 1));
      case 2:
        return MakeBinary(NodeKind::kOr, Bool(depth - 1), Bool(depth - 1));
      case 3:
        return MakeNot(Bool(depth - 1));
      default:
        return MakeBinary(kCmp[Pick(6)], Int(std::max(depth - 1, 0)), Int(depth / 2));
    }
  }

  int64_t Pick(size_t n) { return static_cast<int64_t>(rng_() % n); }

 private:
  // `a` taken apart into mixed-radix digits, `(a // L) % E * L`, and summed again, sometimes with
  // a wrong scale or a missing digit: the simplifier's digit joining must get all of them right.
  Expr Digits(const Expr& a) {
    static constexpr int64_t kRadix[] = {2, 3, 4};
    Expr sum;
    int64_t lower = 1;
    for (int64_t n = Pick(3) + 1; n > 0; --n) {
      int64_t e = kRadix[Pick(3)];
      Expr digit = MakeBinary(NodeKind::kFloorDiv, a, Expr(lower));
      if (Pick(2)) {
        digit = MakeBinary(NodeKind::kFloorMod, digit, Expr(e));
      } else {
        digit = MakeBinary(NodeKind::kFloorDiv, MakeBinary(NodeKind::kFloorMod, a, Expr(lower * e)),
                           Expr(lower));
      }
      int64_t scale = Pick(6) == 0 ? lower + 1 : lower;
      if (Pick(6) != 0) {
        Expr term = MakeBinary(NodeKind::kMul, digit, Expr(scale));
        sum = sum.defined() ? MakeBinary(NodeKind::kAdd, sum, term) : term;
      }
      lower *= e;
    }
    Expr top =
        MakeBinary(NodeKind::kMul, MakeBinary(NodeKind::kFloorDiv, a, Expr(lower)), Expr(lower));
    return sum.defined() ? MakeBinary(NodeKind::kAdd, top, sum) : top;
  }

  int64_t Divisor() {
    static constexpr int64_t kDivisors[] = {1, 2, 3, 4, 6, 8, 16};
    return kDivisors[Pick(7)];
  }

  std::mt19937_64& rng_;
  std::vector<Var> vars_;
};

void RunDifferential(bool bind_ranges, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Var x("x"), y("y"), z("z");
  // z is last: the generator divides by it, so it is always at least 1.
  struct Dom {
    Var var;
    int64_t min, extent;
  };
  std::vector<Dom> doms = {{x, 0, 16}, {y, -8, 16}, {z, 1, 12}};
  Analyzer analyzer;
  if (bind_ranges) {
    for (const Dom& d : doms) analyzer.Bind(d.var, Range::FromMinExtent(d.min, d.extent));
  } else {
    // Unbound variables range widely; only z keeps a sign so that dividing by it is defined.
    doms[0] = {x, -40, 80};
    doms[1] = {y, -40, 80};
    analyzer.Bind(z, Range::FromMinExtent(1, 1000));
    doms[2] = {z, 1, 40};
  }
  ExprGenerator gen(&rng, {x, y, z});
  int checked = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    Expr e = gen.Pick(4) == 0 ? gen.Bool(3) : gen.Int(4);
    Expr s = analyzer.Simplify(e);
    for (int p = 0; p < 12; ++p) {
      int64_t vals[3];
      for (int d = 0; d < 3; ++d) vals[d] = doms[d].min + gen.Pick(doms[d].extent);
      auto env = [&](const VarNode* v) -> int64_t {
        for (int d = 0; d < 3; ++d) {
          if (doms[d].var.get() == v) return vals[d];
        }
        ADD_FAILURE() << "unknown variable " << v->name;
        return 0;
      };
      std::optional<int64_t> want = Eval(e, env);
      if (!want) continue;
      std::optional<int64_t> got = Eval(s, env);
      ASSERT_TRUE(got.has_value())
          << "simplified form undefined where the input is defined"
          << "\n  input:  " << ToString(e) << "\n  output: " << ToString(s);
      ASSERT_EQ(*got, *want) << "at x=" << vals[0] << " y=" << vals[1] << " z=" << vals[2]
                             << "\n  input:  " << ToString(e) << "\n  output: " << ToString(s);
      ++checked;
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(SimplifyDifferential, RandomExpressionsWithBoundedVars) { RunDifferential(true, 1); }
TEST(SimplifyDifferential, RandomExpressionsWithFreeVars) { RunDifferential(false, 2); }
TEST(SimplifyDifferential, MoreSeeds) {
  for (uint64_t seed = 10; seed < 14; ++seed) {
    RunDifferential(seed % 2 == 0, seed);
  }
}

}  // namespace
}  // namespace tirtune::arith
