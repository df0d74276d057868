// The CPU design space as a whole, over every workload of the operator library at its small
// shape: spaces exist, random samples replay and postprocess, every valid sample computes what
// the unscheduled function computes, mutated samples replay or are rejected cleanly, and sample
// traces round-trip through JSON. Then GEMM specifics: three spaces, and the hand-written
// schedule's structure among them.
#include <gtest/gtest.h>

#include "space_check.h"
#include "tirtune/ir/functor.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using testing::SmallSpec;
using testing::WorkloadNames;

using testing::CompareOutputs;
using testing::ExpectTraceRoundTrip;
using testing::TestConfig;


class EveryWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryWorkload, SamplesAreMostlyValidAndComputeTheSameOutputs) {
  const PrimFunc f = MakeWorkload(SmallSpec(*FindWorkload(GetParam()))).func;
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, /*seed=*/1);
  ASSERT_GE(spaces.size(), 1u);
  std::vector<Trace> space_traces;
  for (const Schedule& space : spaces) space_traces.push_back(WithoutDecisions(space.trace()));

  RandomEngine rng(42);
  int valid = 0;
  int mutated = 0;
  const int kSamples = 20;
  for (int i = 0; i < kSamples; ++i) {
    const Trace& trace = space_traces[i % space_traces.size()];
    std::optional<Schedule> sample = gen.ReplayAndPostprocess(f, trace, /*seed=*/100 + i);
    if (!sample) continue;
    ++valid;
    EXPECT_EQ(CompareOutputs(f, sample->func()), "") << sample->trace().ToText();
    if (i < 2) ExpectTraceRoundTrip(*sample, f);
    // The mutators in turn: the mutated trace replays to a correct schedule or is rejected
    // cleanly.
    Mutator& mutator = *gen.mutators()[i % gen.mutators().size()].mutator;
    std::optional<Trace> changed = mutator.Apply(f, sample->trace(), rng);
    if (!changed) continue;
    std::optional<Schedule> replayed = gen.ReplayAndPostprocess(f, *changed, /*seed=*/7);
    if (!replayed) continue;
    ++mutated;
    EXPECT_EQ(CompareOutputs(f, replayed->func()), "") << mutator.name() << "\n"
                                                       << replayed->trace().ToText();
  }
  EXPECT_GE(valid, kSamples * 3 / 4) << spaces.size() << " spaces";
  RecordProperty("valid_samples", valid);
  RecordProperty("valid_mutations", mutated);
}

INSTANTIATE_TEST_SUITE_P(Workloads, EveryWorkload, ::testing::ValuesIn(WorkloadNames()),
                         [](const auto& info) { return info.param; });

// ---- GEMM.

bool HasBlock(const PrimFunc& f, const std::string& name) {
  return testing::FindBlock(f, name) != nullptr;
}

// The loop kinds on the path from the function body down to block `name`, outermost first.
std::vector<const ForNode*> LoopsAboveBlock(const PrimFunc& f, const std::string& name) {
  ScheduleState state(f);
  const BlockRealizeNode* realize = state.FindBlock(name);
  if (realize == nullptr) return {};
  std::vector<const ForNode*> loops;
  for (const StmtNode* node : state.Ancestors(realize)) {
    if (node->kind() == NodeKind::kFor) loops.push_back(static_cast<const ForNode*>(node));
  }
  return loops;
}

// The hand-written schedule's shape: a parallel outermost loop, the update's innermost loop
// vectorized, results accumulated in a local cache written back inside the parallel loop, and
// the init decomposed out of the reduction.
bool HasHandWrittenStructure(const PrimFunc& f) {
  std::vector<const ForNode*> c = LoopsAboveBlock(f, "C");
  std::vector<const ForNode*> write_back = LoopsAboveBlock(f, "C_local");
  return !c.empty() && !write_back.empty() && c.front()->for_kind == ForKind::kParallel &&
         c.back()->for_kind == ForKind::kVectorized && write_back.front() == c.front() &&
         HasBlock(f, "C_init");
}

TEST(GemmSpace, HasThreeDesignSpacesLikeMetaSchedule) {
  const PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  std::vector<Schedule> spaces =
      SpaceGenerator::DefaultCpu(TestConfig()).GenerateDesignSpaces(f, 1);
  ASSERT_EQ(spaces.size(), 3u);
  // No cache; a local write cache at tile level 1; at tile level 2.
  EXPECT_FALSE(HasBlock(spaces[0].func(), "C_local"));
  std::vector<size_t> depths;
  for (size_t s = 1; s < 3; ++s) {
    ASSERT_TRUE(HasBlock(spaces[s].func(), "C_local"));
    depths.push_back(LoopsAboveBlock(spaces[s].func(), "C_local").size());
  }
  EXPECT_EQ(depths, (std::vector<size_t>{2 + 2, 4 + 2}));  // under i0 j0 / i0 j0 i1 j1, + 2 own
}

TEST(GemmSpace, ContainsTheHandWrittenSchedule) {
  // bench/common/gemm_tiling.h's ScheduleGemm(f, 8, 32) as decisions of the level-2 cache space:
  // i = [1, 8, 1, 8], j = [2, 1, 1, 32], k = [64, 1], unroll 512 (the 8 x 32 tile unrolled).
  const PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  Trace trace = WithoutDecisions(gen.GenerateDesignSpaces(f, 1)[2].trace());
  std::vector<nlohmann::json> tiles = {{1, 8, 1, 8}, {2, 1, 1, 32}, {64, 1}};
  size_t next_tile = 0;
  for (size_t i = 0; i < trace.insts().size(); ++i) {
    const std::string& kind = trace.insts()[i].kind->name;
    if (kind == "SampleGuardedTile") trace = trace.WithDecision(i, tiles.at(next_tile++));
    if (kind == "SampleCategorical") trace = trace.WithDecision(i, 3);
  }
  ASSERT_EQ(next_tile, 3u);
  std::optional<Schedule> sch = gen.ReplayAndPostprocess(f, trace, 1);
  ASSERT_TRUE(sch.has_value());
  EXPECT_TRUE(HasHandWrittenStructure(sch->func())) << Print(sch->func());
  std::vector<const ForNode*> c = LoopsAboveBlock(sch->func(), "C");
  EXPECT_EQ(*AsConstInt(c.front()->extent), 2 * 8);  // j0 and i1 fused into the parallel loop
  EXPECT_EQ(*AsConstInt(c.back()->extent), 32);
  EXPECT_EQ(CompareOutputs(f, sch->func()), "");
}

TEST(GemmSpace, RandomSamplesReachTheHandWrittenStructure) {
  const PrimFunc f = MakeWorkload("gemm:64,64,64").func;
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, 1);
  int found = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    std::optional<Schedule> sch =
        gen.ReplayAndPostprocess(f, WithoutDecisions(spaces[seed % spaces.size()].trace()), seed);
    if (sch && HasHandWrittenStructure(sch->func())) ++found;
  }
  EXPECT_GE(found, 1);
}

// ---- Convolution.

TEST(ConvSpace, EachSpaceComesAgainWithThePaddingInlined) {
  const PrimFunc f = MakeWorkload("conv2d:1,7,7,4,8,3,1,1").func;
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, 1);
  size_t inlined = 0;
  for (const Schedule& space : spaces) {
    if (!HasBlock(space.func(), "pad_temp")) {
      ++inlined;
      std::optional<Schedule> sch =
          gen.ReplayAndPostprocess(f, WithoutDecisions(space.trace()), /*seed=*/3);
      ASSERT_TRUE(sch.has_value()) << space.trace().ToText();
      EXPECT_EQ(CompareOutputs(f, sch->func()), "");
    }
  }
  EXPECT_GT(inlined, 0u);
  EXPECT_EQ(inlined * 2, spaces.size());
}

}  // namespace
}  // namespace tirtune
