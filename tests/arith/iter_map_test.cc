// Affine iterator-map detection: which block bindings are bijective quasi-affine maps of their
// loops, how they decompose into digits, and why the others are rejected. Every accepted map is
// also checked by brute force: the decomposition evaluates to the binding, and distinct loop
// points give distinct binding tuples.
#include "tirtune/arith/iter_map.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/substitute.h"

namespace tirtune::arith {
namespace {

class IterMapTest : public ::testing::Test {
 protected:
  void Loop(const Var& v, int64_t extent, int64_t min = 0) {
    doms_[v] = Range::FromMinExtent(min, extent);
  }

  IterMapResult Detect(const std::vector<Expr>& bindings) {
    IterMapResult r = DetectIterMap(bindings, doms_, &analyzer_);
    if (r.ok()) CheckByEnumeration(bindings, r);
    return r;
  }

  void ExpectRejected(const std::vector<Expr>& bindings, const std::string& reason) {
    IterMapResult r = DetectIterMap(bindings, doms_, &analyzer_);
    std::string shown;
    for (const Expr& b : bindings) shown += ToString(b) + "; ";
    ASSERT_FALSE(r.ok()) << "accepted: " << shown;
    EXPECT_NE(r.error.find(reason), std::string::npos)
        << "bindings: " << shown << "\n  error:    " << r.error << "\n  expected: ..." << reason
        << "...";
  }

  // Walks every loop point: the decomposition must evaluate like the binding, and no two points
  // may give the same tuple of binding values.
  void CheckByEnumeration(const std::vector<Expr>& bindings, const IterMapResult& r) {
    std::vector<std::pair<Var, Range>> loops(doms_.begin(), doms_.end());
    std::set<std::vector<int64_t>> seen;
    int64_t points = 0;
    std::vector<int64_t> at(loops.size(), 0);
    while (true) {
      VarMap vmap;
      for (size_t d = 0; d < loops.size(); ++d) {
        vmap[loops[d].first.get()] = loops[d].second.min + at[d];
      }
      std::vector<int64_t> tuple;
      for (size_t k = 0; k < bindings.size(); ++k) {
        Expr want = analyzer_.Simplify(Substitute(bindings[k], vmap));
        Expr got = analyzer_.Simplify(Substitute(IterSumToExpr(r.indices[k], r), vmap));
        ASSERT_TRUE(analyzer_.CanProveEqual(got, want))
            << "binding " << ToString(bindings[k]) << " evaluates to " << ToString(want)
            << " but its decomposition to " << ToString(got);
        // Loop-invariant symbols are the same at every point: they cannot tell points apart.
        if (const int64_t* v = AsConstInt(want)) tuple.push_back(*v);
      }
      EXPECT_TRUE(seen.insert(tuple).second) << "two loop points share a binding tuple";
      ++points;
      size_t d = 0;
      for (; d < loops.size(); ++d) {
        if (++at[d] < *AsConstInt(loops[d].second.extent)) break;
        at[d] = 0;
      }
      if (d == loops.size()) break;
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), points);
  }

  int MarkOf(const IterMapResult& r, const Var& v) {
    for (size_t m = 0; m < r.marks.size(); ++m) {
      if (r.marks[m].loop.same_as(v)) return static_cast<int>(m);
    }
    return -1;
  }

  Analyzer analyzer_;
  VarRangeMap doms_;
  Var i{"i"}, j{"j"}, k{"k"}, f{"f"};
};

TEST_F(IterMapTest, IdentityBindings) {
  Loop(i, 8);
  Loop(j, 4);
  IterMapResult r = Detect({i, j});
  ASSERT_TRUE(r.ok()) << r.error;
  int mi = MarkOf(r, i), mj = MarkOf(r, j);
  ASSERT_GE(mi, 0);
  ASSERT_GE(mj, 0);
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{mi, 1, 8, 1}}));
  EXPECT_EQ(r.indices[1].args, (std::vector<IterSplit>{{mj, 1, 4, 1}}));
  EXPECT_EQ(r.indices[0].extent, 8);
  EXPECT_TRUE(IsConstInt(r.indices[0].base, 0));
}

TEST_F(IterMapTest, FusedBindingOfSplitLoops) {
  Loop(i, 8);
  Loop(j, 4);
  IterMapResult r = Detect({i * 4 + j});
  ASSERT_TRUE(r.ok()) << r.error;
  int mi = MarkOf(r, i), mj = MarkOf(r, j);
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{mi, 1, 8, 4}, {mj, 1, 4, 1}}));
  EXPECT_EQ(r.indices[0].extent, 32);
}

TEST_F(IterMapTest, SplitsOfOneLoop) {
  Loop(f, 32);
  IterMapResult r = Detect({FloorDiv(f, 4), FloorMod(f, 4)});
  ASSERT_TRUE(r.ok()) << r.error;
  int mf = MarkOf(r, f);
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{mf, 4, 8, 1}}));
  EXPECT_EQ(r.indices[1].args, (std::vector<IterSplit>{{mf, 1, 4, 1}}));
}

TEST_F(IterMapTest, ThreeWaySplitOfOneLoop) {
  Loop(f, 64);
  IterMapResult r = Detect({FloorDiv(f, 16), FloorDiv(FloorMod(f, 16), 4), FloorMod(f, 4)});
  ASSERT_TRUE(r.ok()) << r.error;
  int mf = MarkOf(r, f);
  EXPECT_EQ(r.indices[1].args, (std::vector<IterSplit>{{mf, 4, 4, 1}}));
}

TEST_F(IterMapTest, SplitOfFusedLoops) {
  Loop(i, 8);
  Loop(j, 4);
  Expr fused = i * 4 + j;
  IterMapResult r = Detect({FloorDiv(fused, 8), FloorMod(fused, 8)});
  ASSERT_TRUE(r.ok()) << r.error;
  int mi = MarkOf(r, i), mj = MarkOf(r, j);
  int mfused = r.indices[0].args.at(0).mark;
  const IterMark& m = r.marks[mfused];
  EXPECT_FALSE(m.is_loop());
  EXPECT_EQ(m.extent, 32);
  EXPECT_EQ(m.fused, (std::vector<IterSplit>{{mi, 1, 8, 4}, {mj, 1, 4, 1}}));
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{mfused, 8, 4, 1}}));
  EXPECT_EQ(r.indices[1].args, (std::vector<IterSplit>{{mfused, 1, 8, 1}}));
}

TEST_F(IterMapTest, DivisionAlignedWithDigitsNeedsNoFusion) {
  Loop(i, 8);
  Loop(j, 4);
  IterMapResult r = Detect({FloorDiv(i * 4 + j, 4), FloorMod(i * 4 + j, 4)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.marks.size(), 2u);  // no fused mark
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{MarkOf(r, i), 1, 8, 1}}));
  EXPECT_EQ(r.indices[1].args, (std::vector<IterSplit>{{MarkOf(r, j), 1, 4, 1}}));
}

TEST_F(IterMapTest, SplitAndRefuseIsOneDigit) {
  Loop(f, 32);
  IterMapResult r = Detect({FloorDiv(f, 4) * 4 + FloorMod(f, 4)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{MarkOf(r, f), 1, 32, 1}}));
}

TEST_F(IterMapTest, ConstantsAndOffsets) {
  Loop(i, 8);
  Loop(j, 4, /*min=*/2);
  Var n("n");  // not a loop: a loop-invariant symbol
  IterMapResult r = Detect({i + 3, Expr(0), j, n});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(IsConstInt(r.indices[0].base, 3));
  EXPECT_TRUE(r.indices[1].args.empty());
  EXPECT_TRUE(IsConstInt(r.indices[1].base, 0));
  EXPECT_EQ(r.indices[1].extent, 1);
  EXPECT_TRUE(IsConstInt(r.indices[2].base, 2));
  EXPECT_TRUE(r.indices[3].base.same_as(n));
}

TEST_F(IterMapTest, UnitLoopsStandForTheirMin) {
  Loop(i, 8);
  Loop(k, 1);
  IterMapResult r = Detect({i + k * 100});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.indices[0].args.size(), 1u);
}

TEST_F(IterMapTest, ScaledBindingIsInjective) {
  Loop(i, 8);
  IterMapResult r = Detect({i * 2});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.indices[0].args, (std::vector<IterSplit>{{MarkOf(r, i), 1, 8, 2}}));
}

TEST_F(IterMapTest, TruncatingDivisionOfNonNegative) {
  Loop(f, 32);
  IterMapResult r = Detect({f / 8, FloorMod(f, 8)});
  ASSERT_TRUE(r.ok()) << r.error;
}

TEST_F(IterMapTest, RejectsLoopUsedTwice) {
  Loop(i, 8);
  ExpectRejected({i, i}, "loop i is used more than once");
  ExpectRejected({FloorDiv(i, 2), i}, "loop i is used more than once");
}

TEST_F(IterMapTest, RejectsProductOfLoops) {
  Loop(i, 8);
  Loop(j, 4);
  ExpectRejected({i * j}, "product of two loop-dependent values is not affine");
}

TEST_F(IterMapTest, RejectsOverlappingSum) {
  Loop(i, 4);
  Loop(j, 4);
  ExpectRejected({i + j}, "overlaps");
  ExpectRejected({i * 2 + j}, "overlaps");
}

TEST_F(IterMapTest, RejectsGapInSum) {
  Loop(i, 4);
  Loop(j, 4);
  ExpectRejected({i * 8 + j}, "leaves a gap");
}

TEST_F(IterMapTest, RejectsUnusedLoop) {
  Loop(i, 8);
  Loop(j, 4);
  ExpectRejected({i}, "loop j is not used by any binding");
}

TEST_F(IterMapTest, RejectsPartlyUsedLoop) {
  Loop(f, 32);
  ExpectRejected({FloorDiv(f, 4)}, "loop f is only partly used");
  ExpectRejected({FloorMod(f, 4)}, "loop f is only partly used");
}

TEST_F(IterMapTest, RejectsNonAffineOperations) {
  Loop(i, 8);
  Loop(j, 8);
  ExpectRejected({Min(i, j), j}, "is not affine");
  ExpectRejected({FloorDiv(i, j), j}, "not a positive constant");
  ExpectRejected({0 - i, j}, "negative coefficient");
}

TEST_F(IterMapTest, RejectsIndivisibleSplit) {
  Loop(f, 8);
  ExpectRejected({FloorDiv(f, 3), FloorMod(f, 3)}, "not divisible by 3");
}

TEST_F(IterMapTest, RejectsSymbolicExtent) {
  Var n("n");
  doms_[i] = Range::FromMinExtent(0, n);
  ExpectRejected({i}, "non-constant extent");
}

// Bindings produced by random sequences of split and fuse on a two-dimensional iteration space
// are what schedules create; all of them must be accepted, raw or simplified.
TEST(IterMapRandom, AcceptsEverySplitAndFuseSchedule) {
  std::mt19937_64 rng(3);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  for (int trial = 0; trial < 150; ++trial) {
    struct Loop {
      Var var;
      int64_t extent;
    };
    static constexpr int64_t kExtents[] = {2, 4, 6, 8, 16};
    std::vector<Loop> loops = {{Var("a"), kExtents[pick(5)]}, {Var("b"), kExtents[pick(5)]}};
    std::vector<Expr> bindings = {loops[0].var, loops[1].var};
    std::string history;
    int fresh = 0;
    for (int step = pick(5); step > 0; --step) {
      VarMap vmap;
      size_t at = static_cast<size_t>(pick(static_cast<int64_t>(loops.size())));
      if (pick(2) == 0 || loops.size() == 1) {
        // split loops[at] into outer * inner with a factor that divides its extent
        Loop l = loops[at];
        std::vector<int64_t> factors;
        for (int64_t f = 2; f < l.extent; ++f) {
          if (l.extent % f == 0) factors.push_back(f);
        }
        if (factors.empty()) continue;
        int64_t inner = factors[pick(static_cast<int64_t>(factors.size()))];
        Loop o{Var("o" + std::to_string(fresh)), l.extent / inner};
        Loop in{Var("n" + std::to_string(fresh++)), inner};
        vmap[l.var.get()] = o.var * inner + in.var;
        loops.erase(loops.begin() + static_cast<long>(at));
        loops.insert(loops.begin() + static_cast<long>(at), {o, in});
        history += " split(" + l.var->name + ", " + std::to_string(inner) + ")";
      } else {
        // fuse loops[at] with its neighbour
        if (at + 1 == loops.size()) --at;
        Loop outer = loops[at], inner = loops[at + 1];
        Loop f{Var("f" + std::to_string(fresh++)), outer.extent * inner.extent};
        vmap[outer.var.get()] = FloorDiv(f.var, inner.extent);
        vmap[inner.var.get()] = FloorMod(f.var, inner.extent);
        loops.erase(loops.begin() + static_cast<long>(at),
                    loops.begin() + static_cast<long>(at) + 2);
        loops.insert(loops.begin() + static_cast<long>(at), f);
        history += " fuse(" + outer.var->name + ", " + inner.var->name + ")";
      }
      for (Expr& b : bindings) b = Substitute(b, vmap);
    }
    VarRangeMap doms;
    Analyzer analyzer;
    for (const Loop& l : loops) {
      doms[l.var] = Range::FromMinExtent(0, l.extent);
      analyzer.Bind(l.var, doms[l.var]);
    }
    for (bool simplify : {false, true}) {
      std::vector<Expr> input = bindings;
      if (simplify) {
        for (Expr& b : input) b = analyzer.Simplify(b);
      }
      IterMapResult r = DetectIterMap(input, doms, &analyzer);
      EXPECT_TRUE(r.ok()) << "schedule:" << history << "\n  bindings: " << ToString(input[0])
                          << "; " << ToString(input[1]) << "\n  error: " << r.error;
      if (!r.ok()) continue;
      for (size_t k = 0; k < input.size(); ++k) {
        EXPECT_TRUE(analyzer.CanProveEqual(IterSumToExpr(r.indices[k], r), input[k]))
            << ToString(IterSumToExpr(r.indices[k], r)) << " vs " << ToString(input[k]);
      }
    }
  }
}

}  // namespace
}  // namespace tirtune::arith
