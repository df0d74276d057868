// SpaceGenerator's replay with postprocessing (and why it rejects a sample), WithoutDecisions, the
// CPU configuration of a target, and the two trace behaviours the search relies on: a location
// decision that inlines still replays as a compute_at of the sampled location.
#include <gtest/gtest.h>

#include "ir_texts.h"
#include "space_check.h"
#include "tirtune/ir/parser.h"

namespace tirtune {
namespace {

using testing::CompareOutputs;
using testing::TestConfig;

PrimFunc Parse(const char* text) { return ParsePrimFunc(text, "test"); }

TEST(ReplayAndPostprocess, SamplesTheMissingDecisionsAndRunsThePostprocessors) {
  PrimFunc f = Parse(testing::kGemm);
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  Trace space = WithoutDecisions(gen.GenerateDesignSpaces(f, 1)[0].trace());
  std::optional<Schedule> a = gen.ReplayAndPostprocess(f, space, 11);
  std::optional<Schedule> b = gen.ReplayAndPostprocess(f, space, 11);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_TRUE(StructuralEqual(a->func(), b->func()));  // the seed decides
  bool postproc = false;
  for (const Instruction& inst : a->trace().insts()) {
    if (inst.kind->name == "SampleGuardedTile") {
      EXPECT_FALSE(inst.decision.is_null());
    }
    postproc |= inst.kind->name == "EnterPostproc";
  }
  EXPECT_TRUE(postproc);
  EXPECT_TRUE(testing::FindBlock(a->func(), "root")->annotations.empty());
  EXPECT_EQ(CompareOutputs(f, a->func()), "");
}

TEST(ReplayAndPostprocess, ReplaysItsOwnTraceToTheSameFunction) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  for (const Schedule& space : gen.GenerateDesignSpaces(f, 1)) {
    std::optional<Schedule> sample =
        gen.ReplayAndPostprocess(f, WithoutDecisions(space.trace()), 5);
    ASSERT_TRUE(sample.has_value());
    std::optional<Schedule> again = gen.ReplayAndPostprocess(f, sample->trace(), 99);
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(StructuralEqual(again->func(), sample->func()));
  }
}

TEST(ReplayAndPostprocess, RejectsAnInvalidDecision) {
  PrimFunc f = Parse(testing::kGemm);
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  Trace trace = gen.GenerateDesignSpaces(f, 1)[0].trace();
  for (size_t i = 0; i < trace.insts().size(); ++i) {
    if (trace.insts()[i].kind->name == "SampleGuardedTile") {
      trace = trace.WithDecision(i, nlohmann::json::array({1, 1, 1, 4096}));  // innermost > 64
      break;
    }
  }
  EXPECT_FALSE(gen.ReplayAndPostprocess(f, trace, 1).has_value());
  std::string why = gen.WhyRejected(f, trace, 1);
  EXPECT_NE(why.find("replaying the design space failed"), std::string::npos) << why;
  EXPECT_EQ(gen.WhyRejected(f, WithoutDecisions(trace), 1), "");  // valid once re-sampled
}

// A postprocessor that rejects everything, for WhyRejected's naming of it.
class RejectAll : public Postproc {
 public:
  std::string name() const override { return "RejectAll"; }
  bool Apply(Schedule&) override { return false; }
};

TEST(ReplayAndPostprocess, WhyRejectedNamesTheRejectingPostprocessor) {
  PrimFunc f = Parse(testing::kGemm);
  SpaceGenerator base = SpaceGenerator::DefaultCpu(TestConfig());
  std::vector<std::shared_ptr<Postproc>> postprocs = base.postprocs();
  postprocs.push_back(std::make_shared<RejectAll>());
  SpaceGenerator gen(base.rules(), postprocs, base.mutators());
  Trace space = WithoutDecisions(gen.GenerateDesignSpaces(f, 1)[0].trace());
  EXPECT_FALSE(gen.ReplayAndPostprocess(f, space, 3).has_value());
  EXPECT_EQ(gen.WhyRejected(f, space, 3), "the postprocessor RejectAll rejected it");
}

TEST(WithoutDecisions, DropsDecisionsUnusedLookupsAndPostprocessing) {
  PrimFunc f = Parse(testing::kGemm);
  SpaceGenerator gen = SpaceGenerator::DefaultCpu(TestConfig());
  Schedule space = gen.GenerateDesignSpaces(f, 1)[0];
  std::optional<Schedule> sample = gen.ReplayAndPostprocess(f, space.trace(), 1);
  ASSERT_TRUE(sample.has_value());
  Trace bare = WithoutDecisions(sample->trace());
  EXPECT_LT(bare.insts().size(), space.trace().insts().size());
  for (const Instruction& inst : bare.insts()) {
    EXPECT_TRUE(inst.decision.is_null()) << inst.kind->name;
    EXPECT_NE(inst.kind->name, "EnterPostproc");
  }
}

TEST(ComputeAtInlineLocation, RecordsAComputeAtThatFollowsAChangedDecision) {
  PrimFunc f = Parse(testing::kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  LoopRV where = sch.SampleComputeLocation(b, /*decision=*/int64_t{-2});
  sch.ComputeAt(b, where);
  EXPECT_EQ(sch.state().FindBlock("B"), nullptr);
  EXPECT_EQ(sch.trace().insts().back().kind->name, "ComputeAt");
  // The same trace with the location changed to C's outer loop moves B instead.
  Trace moved = sch.trace().WithDecision(1, 0);
  Schedule replay(f);
  moved.ApplyTo(replay);
  ASSERT_NE(replay.state().FindBlock("B"), nullptr);
  EXPECT_EQ(replay.GetLoops(replay.GetBlock("B")).size(), 2u);
  EXPECT_EQ(CompareOutputs(f, replay.func()), "");
}

TEST(CpuSpaceConfig, TakesCoresAndVectorWidthFromTheTarget) {
  CpuSpaceConfig avx512 =
      CpuSpaceConfig::For(Target::Parse("llvm -mcpu=skylake-avx512 -num-cores=8"));
  EXPECT_EQ(avx512.num_cores, 8);
  EXPECT_EQ(avx512.vector_bytes, 64);
  CpuSpaceConfig avx2 =
      CpuSpaceConfig::For(Target::Parse("llvm -mcpu=skylake-avx512 -mattr=-avx512f -num-cores=2"));
  EXPECT_EQ(avx2.vector_bytes, 32);
  EXPECT_EQ(CpuSpaceConfig::For(Target::Parse("llvm -mcpu=haswell -num-cores=2")).vector_bytes, 32);
  CpuSpaceConfig defaults;
  EXPECT_EQ(avx2.max_jobs_per_core, defaults.max_jobs_per_core);
  EXPECT_EQ(avx2.unroll_max_steps, defaults.unroll_max_steps);
}

TEST(DefaultCpuMutators, HaveMetaSchedulesProbabilities) {
  std::vector<MutatorWithProb> mutators = DefaultCpuMutators(TestConfig());
  ASSERT_EQ(mutators.size(), 4u);
  EXPECT_EQ(mutators[0].mutator->name(), "MutateTileSize");
  EXPECT_DOUBLE_EQ(mutators[0].prob, 0.90);
  EXPECT_DOUBLE_EQ(mutators[1].prob, 0.05);
  EXPECT_DOUBLE_EQ(mutators[2].prob, 0.03);
  EXPECT_DOUBLE_EQ(mutators[3].prob, 0.02);
}

}  // namespace
}  // namespace tirtune
