// sample_perfect_tile and sample_categorical: valid samples, determinism per seed, decisions.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(SamplePerfectTile, EverySampleTilesTheExtentExactly) {
  PrimFunc f = ParseFunc(kGemm);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Schedule sch(f, seed);
    auto loops = sch.GetLoops(sch.GetBlock("C"));
    auto tiles = sch.SamplePerfectTile(loops[0], /*n=*/4, /*max_innermost_factor=*/4);
    int64_t product = 1;
    for (ExprRV t : tiles) product *= sch.Get(t);
    ASSERT_EQ(product, 16) << "seed " << seed;
    ASSERT_LE(sch.Get(tiles.back()), 4) << "seed " << seed;
  }
}

TEST(SamplePerfectTile, SameSeedSameSample) {
  PrimFunc f = ParseFunc(kGemm);
  auto sample = [&](uint64_t seed) {
    Schedule sch(f, seed);
    auto loops = sch.GetLoops(sch.GetBlock("C"));
    sch.SamplePerfectTile(loops[1], 3, 0);
    return sch.trace().insts().back().decision;
  };
  EXPECT_EQ(sample(11), sample(11));
}

TEST(SamplePerfectTile, SamplesReachEveryFactorization) {
  PrimFunc f = ParseFunc(kGemm);
  std::set<std::vector<int64_t>> seen;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Schedule sch(f, seed);
    auto loops = sch.GetLoops(sch.GetBlock("C"));
    sch.SamplePerfectTile(loops[2], 2, 0);
    seen.insert(sch.trace().insts().back().decision.get<std::vector<int64_t>>());
  }
  // 8 = 1*8 = 2*4 = 4*2 = 8*1.
  EXPECT_EQ(seen.size(), 4u);
}

TEST(SamplePerfectTile, GivenDecisionIsReused) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto tiles = sch.SamplePerfectTile(loops[0], 2, 16, std::vector<int64_t>{2, 8});
  EXPECT_EQ(sch.Get(tiles[0]), 2);
  EXPECT_EQ(sch.Get(tiles[1]), 8);
}

TEST(SamplePerfectTile, RejectsDecisionThatDoesNotTile) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "InvalidDecisionError", "not a perfect 2-way tiling", [&] {
    sch.SamplePerfectTile(loops[0], 2, 16, std::vector<int64_t>{3, 5});
  });
}

TEST(SampleGuardedTile, TheOutermostFactorCoversTheExtentWithOnePartialTile) {
  // 15 = 3·5 has no power of two in it; guarded tilings tile 16 too (at most 15% more).
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((15,), float32), B: Buffer((15,), float32)):
    for i in range(15):
        with block("B"):
            vi = axis.spatial(15, i)
            B[vi] = A[vi] * 2.0
)");
  std::set<std::vector<int64_t>> seen;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Schedule sch(f, seed);
    auto loops = sch.GetLoops(sch.GetBlock("B"));
    auto tiles = sch.SampleGuardedTile(loops[0], /*n=*/3, /*max_innermost_factor=*/8);
    int64_t inner = sch.Get(tiles[1]) * sch.Get(tiles[2]);
    ASSERT_EQ(sch.Get(tiles[0]), (15 + inner - 1) / inner) << "seed " << seed;
    ASSERT_LE(sch.Get(tiles[2]), 8) << "seed " << seed;
    seen.insert(sch.trace().insts().back().decision.get<std::vector<int64_t>>());
  }
  EXPECT_TRUE(seen.count({5, 3, 1}));  // the perfect tilings stay
  EXPECT_TRUE(seen.count({2, 1, 8}));  // 16 = 2·8, 1 element masked
  EXPECT_TRUE(seen.count({4, 2, 2}));  // 16 = 4·2·2
  for (const std::vector<int64_t>& d : seen) {
    int64_t covered = d[0] * d[1] * d[2];
    EXPECT_TRUE(covered == 15 || covered == 16) << covered;  // 32 or 64 would add over 15%
  }
}

TEST(SampleGuardedTile, AGivenDecisionKeepsItsInnerFactorsAndRecomputesTheOutermost) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));  // extent 16
  auto tiles = sch.SampleGuardedTile(loops[0], 3, 16, std::vector<int64_t>{99, 3, 2});
  EXPECT_EQ(sch.Get(tiles[0]), 3);  // ceil(16 / 6)
  EXPECT_EQ(sch.trace().insts().back().decision, nlohmann::json({3, 3, 2}));
  ExpectScheduleError(sch, "InvalidDecisionError", "not a guarded 2-way tiling", [&] {
    sch.SampleGuardedTile(loops[1], 2, 16, std::vector<int64_t>{1, 32});  // innermost over 16
  });
  ExpectScheduleError(sch, "InvalidDecisionError", "at most 65536 masked", [&] {
    sch.SampleGuardedTile(loops[1], 2, 0, std::vector<int64_t>{1, 1 << 20});
  });
}

TEST(SampleCategorical, SamplesFollowTheProbabilities) {
  Schedule sch(ParseFunc(kGemm), 5);
  int zeros = 0;
  for (int i = 0; i < 1000; ++i) {
    zeros += sch.Get(sch.SampleCategorical({0, 16, 64}, {0.8, 0.1, 0.1})) == 0;
  }
  EXPECT_GT(zeros, 700);
  EXPECT_LT(zeros, 900);
}

TEST(SampleCategorical, RejectsOutOfRangeDecision) {
  Schedule sch(ParseFunc(kGemm));
  ExpectScheduleError(sch, "InvalidDecisionError", "not an index",
                      [&] { sch.SampleCategorical({1, 2}, {0.5, 0.5}, int64_t{2}); });
}

}  // namespace
}  // namespace tirtune
