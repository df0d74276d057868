// Each CPU mutator on its own: what it changes, what it keeps, and when it finds nothing to do.
#include <gtest/gtest.h>

#include <set>

#include "ir_texts.h"
#include "space_check.h"
#include "tirtune/ir/parser.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using testing::CompareOutputs;
using testing::TestConfig;

PrimFunc Parse(const char* text) { return ParsePrimFunc(text, "test"); }

// A sample of the default CPU space of `f` (its trace includes the postprocessing).
Schedule Sample(const PrimFunc& f, size_t space, uint64_t seed) {
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, 1);
  std::optional<Schedule> sch =
      gen.ReplayAndPostprocess(f, WithoutDecisions(spaces.at(space).trace()), seed);
  TT_ICHECK(sch.has_value(), "sample {} of space {} was rejected", seed, space);
  return *sch;
}

// Indices of the instructions of `kind`.
std::vector<size_t> Find(const Trace& trace, const std::string& kind) {
  std::vector<size_t> out;
  for (size_t i = 0; i < trace.insts().size(); ++i) {
    if (trace.insts()[i].kind->name == kind) out.push_back(i);
  }
  return out;
}

// ---- MutateTileSize.

TEST(MutateTileSize, MovesADivisorBetweenFactorsOfOneTile) {
  PrimFunc f = Parse(testing::kGemm);
  Schedule sch = Sample(f, 0, 3);
  Trace base = sch.trace().Simplified(/*remove_postproc=*/true);
  RandomEngine rng(5);
  auto mutator = MakeMutateTileSize();
  for (int round = 0; round < 30; ++round) {
    std::optional<Trace> mutated = mutator->Apply(f, sch.trace(), rng);
    ASSERT_TRUE(mutated.has_value());
    ASSERT_EQ(mutated->insts().size(), base.insts().size());
    int changed = 0;
    for (size_t i : Find(*mutated, "SampleGuardedTile")) {
      std::vector<int64_t> before = base.insts()[i].decision.get<std::vector<int64_t>>();
      std::vector<int64_t> after = mutated->insts()[i].decision.get<std::vector<int64_t>>();
      if (before == after) continue;
      ++changed;
      int64_t p = 1, q = 1;
      for (int64_t x : before) p *= x;
      for (int64_t x : after) q *= x;
      EXPECT_EQ(p, q);
      EXPECT_LE(after.back(), mutated->insts()[i].attrs.at("max_innermost_factor").get<int64_t>());
    }
    EXPECT_EQ(changed, 1);
  }
}

TEST(MutateTileSize, FindsNothingWithoutTiles) {
  PrimFunc f = Parse(testing::kRelu);
  RandomEngine rng(1);
  EXPECT_FALSE(MakeMutateTileSize()->Apply(f, Sample(f, 0, 1).trace(), rng).has_value());
}

// ---- MutateUnroll.

// MutateUnroll once over a sample of `f` whose trace has one SampleCategorical; the mutated trace
// and that instruction's index in it, after checking that its decision changed.
std::pair<Trace, size_t> MutateTheOnlyCategorical(const PrimFunc& f) {
  Schedule sch = Sample(f, 0, 3);
  RandomEngine rng(2);
  std::optional<Trace> mutated = MakeMutateUnroll()->Apply(f, sch.trace(), rng);
  TT_ICHECK(mutated.has_value(), "MutateUnroll found nothing to mutate");
  std::vector<size_t> before = Find(sch.trace(), "SampleCategorical");
  std::vector<size_t> after = Find(*mutated, "SampleCategorical");
  TT_ICHECK(before.size() == 1 && after.size() == 1, "{} and {} categorical samples", before.size(),
            after.size());
  EXPECT_NE(sch.trace().insts()[before[0]].decision, mutated->insts()[after[0]].decision);
  return {*mutated, after[0]};
}

TEST(MutateUnroll, ResamplesAnotherUnrollStep) {
  PrimFunc f = Parse(testing::kGemm);
  Trace mutated = MutateTheOnlyCategorical(f).first;
  std::optional<Schedule> replayed =
      SpaceGenerator::DefaultCpu(TestConfig()).ReplayAndPostprocess(f, mutated, 1);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_EQ(CompareOutputs(f, replayed->func()), "");
}

TEST(MutateUnroll, FindsNothingInASpatialFunction) {
  PrimFunc f = Parse(testing::kRelu);
  RandomEngine rng(1);
  EXPECT_FALSE(MakeMutateUnroll()->Apply(f, Sample(f, 0, 1).trace(), rng).has_value());
}

TEST(MutateUnroll, ResamplesTheVectorWidthOfAStridedFunction) {
  PrimFunc f = Parse(testing::kStridedStencil);
  auto [mutated, index] = MutateTheOnlyCategorical(f);
  // Every width replays to the same outputs.
  for (int64_t width = 0; width < 3; ++width) {
    std::optional<Schedule> replayed =
        SpaceGenerator::DefaultCpu(TestConfig())
            .ReplayAndPostprocess(f, mutated.WithDecision(index, width), 1);
    ASSERT_TRUE(replayed.has_value());
    EXPECT_EQ(CompareOutputs(f, replayed->func()), "");
  }
}

// ---- MutateComputeLocation.

TEST(MutateComputeLocation, MovesAProducerToAnotherAvailableLocation) {
  PrimFunc f = Parse(testing::kExpThenReduce);
  RandomEngine rng(3);
  auto mutator = MakeMutateComputeLocation();
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  std::set<int64_t> reached;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    Schedule sch = Sample(f, 0, seed);
    std::optional<Trace> mutated = mutator->Apply(f, sch.trace(), rng);
    ASSERT_TRUE(mutated.has_value());
    std::vector<size_t> before = Find(sch.trace().Simplified(true), "SampleComputeLocation");
    std::vector<size_t> after = Find(*mutated, "SampleComputeLocation");
    ASSERT_EQ(before, after);
    int changed = 0;
    for (size_t i : after) {
      const nlohmann::json& d = mutated->insts()[i].decision;
      if (d != sch.trace().Simplified(true).insts()[i].decision) ++changed;
      reached.insert(d.get<int64_t>());
    }
    EXPECT_EQ(changed, 1);
    if (std::optional<Schedule> replayed = gen.ReplayAndPostprocess(f, *mutated, seed)) {
      EXPECT_EQ(CompareOutputs(f, replayed->func()), "");
    }
  }
  EXPECT_GE(reached.size(), 2u);
}

TEST(MutateComputeLocation, InlinesAPaddingStageHalfTheTime) {
  PrimFunc f = MakeWorkload("conv2d:1,7,7,4,8,3,1,1").func;
  RandomEngine rng(5);
  auto mutator = MakeMutateComputeLocation();
  int inlined = 0, mutations = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Schedule sch = Sample(f, 0, seed);  // space 0 samples the padding's location
    std::optional<Trace> mutated = mutator->Apply(f, sch.trace(), rng);
    if (!mutated) continue;
    ++mutations;
    for (size_t i : Find(*mutated, "SampleComputeLocation")) {
      inlined += mutated->insts()[i].decision == -2 ? 1 : 0;
    }
  }
  ASSERT_GE(mutations, 30);
  // Half by the bias, and a share of the uniform pick among a dozen locations.
  EXPECT_GE(inlined, mutations * 2 / 5);
  EXPECT_LT(inlined, mutations);
}

TEST(MutateComputeLocation, FindsNothingWithoutLocationDecisions) {
  PrimFunc f = Parse(testing::kGemm);
  RandomEngine rng(1);
  EXPECT_FALSE(MakeMutateComputeLocation()->Apply(f, Sample(f, 0, 1).trace(), rng).has_value());
}

// ---- MutateParallel.

TEST(MutateParallel, ChangesHowManyLoopsRunInParallel) {
  PrimFunc f = Parse(testing::kGemm);
  RandomEngine rng(4);
  auto mutator = MakeMutateParallel(TestConfig());
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  int changed = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    Schedule sch = Sample(f, 0, seed);
    std::optional<Trace> mutated = mutator->Apply(f, sch.trace(), rng);
    if (!mutated) continue;  // a single plan only (e.g. every outer tile of extent 1)
    std::optional<Schedule> replayed = gen.ReplayAndPostprocess(f, *mutated, seed);
    ASSERT_TRUE(replayed.has_value());
    auto parallel_extent = [](const PrimFunc& func) {
      ScheduleState state(func);
      const ForNode* outer = state.LoopsAbove(state.FindBlock("C")).front();
      return outer->for_kind == ForKind::kParallel ? *AsConstInt(outer->extent) : 1;
    };
    changed += parallel_extent(replayed->func()) != parallel_extent(sch.func()) ? 1 : 0;
    EXPECT_EQ(CompareOutputs(f, replayed->func()), "");
  }
  EXPECT_GE(changed, 3);
}

TEST(MutateParallel, FindsNothingWithoutTheAnnotation) {
  PrimFunc f = Parse(testing::kGemm);
  Schedule sch(f);
  RandomEngine rng(1);
  EXPECT_FALSE(MakeMutateParallel(TestConfig())->Apply(f, sch.trace(), rng).has_value());
}

}  // namespace
}  // namespace tirtune
