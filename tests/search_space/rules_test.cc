// Each CPU schedule rule on its own, on small functions, and PostOrderApply's visiting order and
// forking.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir_texts.h"
#include "space_check.h"
#include "tirtune/ir/parser.h"

namespace tirtune {
namespace {

using testing::CompareOutputs;
using testing::FindBlock;
using testing::TestConfig;

PrimFunc Parse(const char* text) { return ParsePrimFunc(text, "test"); }

// Applies `rule` to the block named `name` of a fresh schedule of `f`.
std::vector<Schedule> ApplyRule(ScheduleRule& rule, const PrimFunc& f, const std::string& name,
                                uint64_t seed = 1) {
  Schedule sch(f, seed);
  return rule.Apply(sch, sch.GetBlock(name));
}

// The number of loops above block `name`.
size_t LoopDepth(const PrimFunc& f, const std::string& name) {
  ScheduleState state(f);
  return state.LoopsAbove(state.FindBlock(name)).size();
}

bool HasInstruction(const Trace& trace, const std::string& kind) {
  for (const Instruction& inst : trace.insts()) {
    if (inst.kind->name == kind) return true;
  }
  return false;
}

// ---- AutoInline.

TEST(AutoInline, InlinesAnElementwiseProducerIntoItsConsumer) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  std::vector<Schedule> out = ApplyRule(*MakeAutoInline(), f, "E");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(FindBlock(out[0].func(), "E"), nullptr);
  EXPECT_EQ(CompareOutputs(f, out[0].func()), "");
}

TEST(AutoInline, KeepsAnExpProducerOutsideSpatialFunctions) {
  PrimFunc f = Parse(testing::kExpThenReduce);
  std::vector<Schedule> out = ApplyRule(*MakeAutoInline(), f, "B");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(FindBlock(out[0].func(), "B"), nullptr);
  // The cheap producer next to it still goes.
  EXPECT_EQ(FindBlock(ApplyRule(*MakeAutoInline(), f, "C")[0].func(), "C"), nullptr);
}

TEST(AutoInline, InlinesAnyProducerOfASpatialFunction) {
  PrimFunc f = Parse(testing::kTwoStage);
  std::vector<Schedule> out = ApplyRule(*MakeAutoInline(), f, "B");
  EXPECT_EQ(FindBlock(out[0].func(), "B"), nullptr);
  EXPECT_EQ(CompareOutputs(f, out[0].func()), "");
}

TEST(AutoInline, LeavesABlockWithoutConsumersAlone) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  std::vector<Schedule> out = ApplyRule(*MakeAutoInline(), f, "D");
  EXPECT_TRUE(StructuralEqual(out[0].func(), f));
  EXPECT_FALSE(HasInstruction(out[0].trace(), "ComputeInline"));
}

// ---- AddRFactor.

TEST(AddRFactor, ForksALowParallelismReductionIntoRFactorVariants) {
  PrimFunc f = Parse(testing::kNorm);
  std::vector<Schedule> out = ApplyRule(*MakeAddRFactor(TestConfig()), f, "S");
  ASSERT_EQ(out.size(), 3u);  // rfactor of either part of the split fused reduction, unchanged
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NE(FindBlock(out[i].func(), "S_rf"), nullptr);
    EXPECT_EQ(FindBlock(out[i].func(), "S")->annotations.count(kAnnRandomComputeProducer), 1u);
    EXPECT_EQ(CompareOutputs(f, out[i].func()), "");
  }
  EXPECT_TRUE(StructuralEqual(out[2].func(), f));
}

TEST(AddRFactor, RFactorBlockOfAFusedReductionMovesUnderItsConsumer) {
  // Fusing i and j couples their iterators; the rfactor block must reduce over the fused loop
  // once, wherever compute_at puts it.
  PrimFunc f = Parse(testing::kNorm);
  for (uint64_t seed = 0; seed < 8; ++seed) {
    for (Schedule& sch : ApplyRule(*MakeAddRFactor(TestConfig()), f, "S", seed)) {
      if (FindBlock(sch.func(), "S_rf") == nullptr) continue;
      BlockRV rf = sch.GetBlock("S_rf");
      std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("S"));
      sch.ComputeAt(rf, loops.back());
      EXPECT_EQ(CompareOutputs(f, sch.func()), "") << Print(sch.func());
    }
  }
}

TEST(AddRFactor, LeavesAReductionWithEnoughSpatialParallelismAlone) {
  PrimFunc f = Parse(testing::kGemm);
  std::vector<Schedule> out = ApplyRule(*MakeAddRFactor(TestConfig()), f, "C");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(StructuralEqual(out[0].func(), f));
}

// ---- MultiLevelTiling.

TEST(MultiLevelTiling, TilesGemmAsSSRSRSWithThreeWriteVariants) {
  PrimFunc f = Parse(testing::kGemm);
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "C");
  ASSERT_EQ(out.size(), 3u);
  for (const Schedule& sch : out) {
    EXPECT_EQ(LoopDepth(sch.func(), "C"), 4u + 4u + 2u);
    EXPECT_EQ(FindBlock(sch.func(), "C")->annotations.count(kAnnTilingStructure), 1u);
    int tiles = 0;
    for (const Instruction& inst : sch.trace().insts()) {
      if (inst.kind->name != "SampleGuardedTile") continue;
      ++tiles;
      EXPECT_LE(inst.decision.back().get<int64_t>(), TestConfig().max_innermost_factor);
    }
    EXPECT_EQ(tiles, 3);
    EXPECT_EQ(CompareOutputs(f, sch.func()), "");
  }
  EXPECT_EQ(FindBlock(out[0].func(), "C_local"), nullptr);
  EXPECT_EQ(LoopDepth(out[1].func(), "C_local"), 2u + 2u);
  EXPECT_EQ(LoopDepth(out[2].func(), "C_local"), 4u + 2u);
}

// The extents of the two innermost loops above `block` in `sch` (outer, inner).
std::pair<int64_t, int64_t> InnermostTwoExtents(const Schedule& sch, const char* block) {
  ScheduleState state(sch.func());
  std::vector<const ForNode*> loops = state.LoopsAbove(state.FindBlock(block));
  if (loops.size() < 2) return {-1, -1};
  return {*AsConstInt(loops[loops.size() - 2]->extent), *AsConstInt(loops.back()->extent)};
}

TEST(MultiLevelTiling, PinsTheRegisterTileThatFillsSixteenVectorRegisters) {
  // C is 56 x 16: with AVX2's 16 registers of 8 floats, 6 rows (56 -> 60, guarded) x 2 vectors
  // are 12 accumulators + 2 weight vectors + 1 broadcast; exact factors give at most 4 x 2 (or
  // 7 x 2, which needs 17). A second group of the three write variants pins that tile.
  std::string text = testing::kGemm;
  for (auto [from, to] : {std::pair{"16", "56"}, {"12", "16"}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 2)) {
      text.replace(at, 2, to);
    }
  }
  PrimFunc f = Parse(text.c_str());
  CpuSpaceConfig avx2 = TestConfig();
  avx2.vector_bytes = 32;
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(avx2), f, "C");
  // 64-byte vectors (AVX-512, 32 registers): no pinned group; it comes right after the first.
  std::vector<Schedule> wide = ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "C");
  ASSERT_EQ(out.size(), wide.size() + 3);
  for (size_t d = 0; d < out.size(); ++d) {
    EXPECT_EQ(CompareOutputs(f, out[d].func()), "") << "design " << d;
  }
  // The pinned group: the innermost two loops of C are the 6 rows and the 16 columns.
  for (size_t d = 3; d < 6; ++d) {
    EXPECT_EQ(InnermostTwoExtents(out[d], "C"), (std::pair<int64_t, int64_t>(6, 16)))
        << "design " << d;
  }
}

TEST(MultiLevelTiling, PinsTheVectorInnermostWhateverTheIteratorOrder) {
  // C[i, j] computed with the iterators declared j first: the 16 columns are still innermost.
  PrimFunc f = Parse(R"(@prim_func
def gemm_ji(A: Buffer((56, 8), float32), B: Buffer((8, 16), float32), C: Buffer((56, 16), float32)):
    with block("root"):
        reads()
        writes()
        for j in range(16):
            for i in range(56):
                for k in range(8):
                    with block("C"):
                        vj = axis.spatial(16, j)
                        vi = axis.spatial(56, i)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  CpuSpaceConfig avx2 = TestConfig();
  avx2.vector_bytes = 32;
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(avx2), f, "C");
  ASSERT_EQ(out.size(), ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "C").size() + 3);
  EXPECT_EQ(InnermostTwoExtents(out[3], "C"), (std::pair<int64_t, int64_t>(6, 16)));
  EXPECT_EQ(CompareOutputs(f, out[3].func()), "");
}

TEST(MultiLevelTiling, PinsNoRegisterTileWhereAReadStridesAlongTheVector) {
  // A dense layer whose weight is stored [N, K]: W[vj, vk] walks j by rows, so no vector of it is
  // one load, and no register tile is pinned.
  PrimFunc f = Parse(R"(@prim_func
def dense(A: Buffer((56, 8), float32), W: Buffer((16, 8), float32), C: Buffer((56, 16), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(56):
            for j in range(16):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(56, i)
                        vj = axis.spatial(16, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], W[vj, vk])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vj, vk]
)");
  CpuSpaceConfig avx2 = TestConfig();
  avx2.vector_bytes = 32;
  for (const Schedule& sch : ApplyRule(*MakeMultiLevelTiling(avx2), f, "C")) {
    // Sampled factors of 56 are powers of two or multiples of 7: a 6 comes only from pinning.
    ScheduleState state(sch.func());
    for (const ForNode* loop : state.LoopsAbove(state.FindBlock("C"))) {
      EXPECT_NE(*AsConstInt(loop->extent), 6);
    }
  }
}

TEST(MultiLevelTiling, UsesAnElementwiseConsumerAsTheWriteBackStage) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("E"));  // what AutoInline does first
  std::vector<Schedule> out = MakeMultiLevelTiling(TestConfig())->Apply(sch, sch.GetBlock("T"));
  ASSERT_EQ(out.size(), 3u);
  // D under tile level 1, under level 2, or left at the root; no cache stage.
  EXPECT_EQ(LoopDepth(out[0].func(), "D"), 2u + 2u);
  EXPECT_EQ(LoopDepth(out[1].func(), "D"), 4u + 2u);
  EXPECT_EQ(LoopDepth(out[2].func(), "D"), 2u);
  for (const Schedule& s : out) {
    EXPECT_EQ(FindBlock(s.func(), "T_local"), nullptr);
    EXPECT_EQ(CompareOutputs(f, s.func()), "");
  }
}

TEST(MultiLevelTiling, FusesAnExactBiasAddEpilogueAsMoreVariants) {
  PrimFunc f = Parse(testing::kGemmBias);
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "T");
  ASSERT_EQ(out.size(), 6u);
  int fused = 0;
  for (const Schedule& sch : out) {
    fused += FindBlock(sch.func(), "D") == nullptr ? 1 : 0;
    EXPECT_EQ(CompareOutputs(f, sch.func()), "");
  }
  EXPECT_EQ(fused, 3);  // no cache, and a write cache at either level
  EXPECT_TRUE(HasInstruction(out[3].trace(), "FuseReductionEpilogue"));
}

TEST(MultiLevelTiling, VectorizesADenseLayersReductionIntoLanesOfPartialSums) {
  PrimFunc f = Parse(testing::kDense);
  CpuSpaceConfig config = TestConfig();  // 64-byte vectors: 16 float lanes
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(config), f, "Y");
  // Three tiled variants as for a GEMM, then the lanes variant with the final reduction under
  // either spatial tile level.
  ASSERT_EQ(out.size(), 5u);
  for (size_t v = 3; v < out.size(); ++v) {
    const Schedule& sch = out[v];
    const BlockNode* rf = FindBlock(sch.func(), "Y_rf");
    ASSERT_NE(rf, nullptr);
    EXPECT_EQ(rf->writes[0].buffer->shape.size(), 3u);  // [i, j, lane]
    EXPECT_EQ(*AsConstInt(rf->writes[0].buffer->shape[2]), 16);
    EXPECT_EQ(LoopDepth(sch.func(), "Y_rf"), 4u + 4u + 2u + 1u);  // the lane loop innermost
    ScheduleState state(sch.func());
    EXPECT_EQ(state.LoopsAbove(state.FindBlock("Y_rf")).back()->for_kind, ForKind::kVectorized);
    EXPECT_EQ(CompareOutputs(f, sch.func()), "");
  }
  EXPECT_EQ(LoopDepth(out[3].func(), "Y"), 2u + 2u + 1u);
  EXPECT_EQ(LoopDepth(out[4].func(), "Y"), 4u + 2u + 1u);
  // Narrower vectors: 8 lanes where a vector is 32 bytes; none where a spatial axis vectorizes.
  config.vector_bytes = 32;
  out = ApplyRule(*MakeMultiLevelTiling(config), f, "Y");
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(*AsConstInt(FindBlock(out[3].func(), "Y_rf")->writes[0].buffer->shape[2]), 8);
  EXPECT_EQ(ApplyRule(*MakeMultiLevelTiling(TestConfig()), Parse(testing::kGemm), "C").size(), 3u);
}

// kGemm with M rows and N columns (K = 8).
std::string GemmText(int m, int n) {
  std::string text = testing::kGemm;
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
      text.replace(at, from.size(), to);
    }
  };
  replace("(16, 8)", fmt::format("({}, 8)", m));
  replace("(8, 12)", fmt::format("(8, {})", n));
  replace("(16, 12)", fmt::format("({}, {})", m, n));
  replace("range(16)", fmt::format("range({})", m));
  replace("range(12)", fmt::format("range({})", n));
  replace("spatial(16, i)", fmt::format("spatial({}, i)", m));
  replace("spatial(12, j)", fmt::format("spatial({}, j)", n));
  return text;
}

TEST(MultiLevelTiling, CopiesAnOperandWithRowsOfNoWholeVectorIntoAlignedRows) {
  // B is [8, 20]: rows of 20 floats, read 16 at a time along j, each element used by 64 rows of
  // A. Besides the plain and the padded variants, 3 (the write variants) read B through
  // B_global, whose rows storage_align pads to 32 floats.
  PrimFunc f = ParsePrimFunc(GemmText(64, 20), "test");
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "C");
  int aligned = 0;
  for (const Schedule& sch : out) {
    bool copies = FindBlock(sch.func(), "B_global") != nullptr;
    aligned += copies;
    EXPECT_EQ(HasInstruction(sch.trace(), "StorageAlign"), copies);
    EXPECT_EQ(CompareOutputs(f, sch.func()), "");
  }
  EXPECT_EQ(aligned, 3);
  EXPECT_GE(out.size(), 3u + 3u);
  // Reused by only 16 rows: the copy would not pay.
  for (const Schedule& sch :
       ApplyRule(*MakeMultiLevelTiling(TestConfig()), ParsePrimFunc(GemmText(16, 20), "t"), "C")) {
    EXPECT_EQ(FindBlock(sch.func(), "B_global"), nullptr);
  }
}

TEST(MultiLevelTiling, SkipsAReductionWithoutDataReuse) {
  PrimFunc f = Parse(testing::kNorm);
  std::vector<Schedule> out = ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "S");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(StructuralEqual(out[0].func(), f));
}

// ---- ParallelizeVectorizeUnroll.

TEST(ParallelizeVectorizeUnroll, AnnotatesTheRootWithASampledUnrollStep) {
  PrimFunc f = Parse(testing::kGemm);
  std::vector<Schedule> out = ApplyRule(*MakeParallelizeVectorizeUnroll(TestConfig()), f, "root");
  ASSERT_EQ(out.size(), 1u);
  const Annotations& ann = FindBlock(out[0].func(), "root")->annotations;
  EXPECT_EQ(*AsConstInt(ann.at(kAnnParallel)), 2 * 16);
  EXPECT_EQ(*AsConstInt(ann.at(kAnnVectorize)), 64);
  const size_t index = out[0].trace().insts().size() - 2;  // the sample, then the annotation
  const Instruction& sample = out[0].trace().insts()[index];
  ASSERT_EQ(sample.kind->name, "SampleCategorical");
  EXPECT_EQ(*AsConstInt(ann.at(kAnnUnrollExplicit)),
            TestConfig().unroll_max_steps.at(sample.decision.get<int64_t>()));
  // The annotation takes the sample itself: replaying another decision changes it.
  Trace other = out[0].trace().WithDecision(index, (sample.decision.get<int64_t>() + 1) % 4);
  Schedule replay(f);
  other.ApplyTo(replay);
  EXPECT_NE(*AsConstInt(FindBlock(replay.func(), "root")->annotations.at(kAnnUnrollExplicit)),
            *AsConstInt(ann.at(kAnnUnrollExplicit)));
}

TEST(ParallelizeVectorizeUnroll, SamplesTheVectorWidthWhereAReadStrides) {
  PrimFunc f = Parse(testing::kStridedStencil);
  std::vector<Schedule> out = ApplyRule(*MakeParallelizeVectorizeUnroll(TestConfig()), f, "root");
  ASSERT_EQ(out.size(), 1u);
  const Instruction* sample = nullptr;
  for (const Instruction& inst : out[0].trace().insts()) {
    if (inst.kind->name == "SampleCategorical") sample = &inst;
  }
  ASSERT_NE(sample, nullptr);  // a spatial function: the only sample is the vector width
  EXPECT_EQ(sample->attrs.at("candidates").get<std::vector<int64_t>>(),
            (std::vector<int64_t>{0, 8, 64}));  // none, half a 64-byte vector of floats, all
  const Annotations& ann = FindBlock(out[0].func(), "root")->annotations;
  EXPECT_EQ(*AsConstInt(ann.at(kAnnVectorize)),
            (std::vector<int64_t>{0, 8, 64}).at(sample->decision.get<int64_t>()));
}

TEST(ParallelizeVectorizeUnroll, SamplesNoUnrollForASpatialFunction) {
  PrimFunc f = Parse(testing::kTwoStage);
  std::vector<Schedule> out = ApplyRule(*MakeParallelizeVectorizeUnroll(TestConfig()), f, "root");
  const Annotations& ann = FindBlock(out[0].func(), "root")->annotations;
  EXPECT_EQ(ann.count(kAnnParallel), 1u);
  EXPECT_EQ(ann.count(kAnnUnrollExplicit), 0u);
  EXPECT_FALSE(HasInstruction(out[0].trace(), "SampleCategorical"));
}

TEST(ParallelizeVectorizeUnroll, IgnoresBlocksOtherThanTheRoot) {
  PrimFunc f = Parse(testing::kGemm);
  std::vector<Schedule> out = ApplyRule(*MakeParallelizeVectorizeUnroll(TestConfig()), f, "C");
  EXPECT_TRUE(StructuralEqual(out[0].func(), f));
}

// ---- RandomComputeLocation.

TEST(RandomComputeLocation, MovesAProducerToEverySampledLocation) {
  PrimFunc f = Parse(testing::kExpThenReduce);
  std::set<int64_t> decisions;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::vector<Schedule> out = ApplyRule(*MakeRandomComputeLocation(), f, "C", seed);
    ASSERT_EQ(out.size(), 1u);
    for (const Instruction& inst : out[0].trace().insts()) {
      if (inst.kind->name == "SampleComputeLocation")
        decisions.insert(inst.decision.get<int64_t>());
    }
    EXPECT_EQ(CompareOutputs(f, out[0].func()), "");
  }
  // Root, inline, and R's loops i and j.
  EXPECT_EQ(decisions, (std::set<int64_t>{-2, -1, 0, 1}));
}

TEST(RandomComputeLocation, SkipsATiledBlockAndABlockWithoutConsumers) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  Schedule sch(f);
  sch.Annotate(sch.GetBlock("E"), kAnnTilingStructure, "SSRSRS");
  auto rule = MakeRandomComputeLocation();
  EXPECT_FALSE(
      HasInstruction(rule->Apply(sch, sch.GetBlock("E"))[0].trace(), "SampleComputeLocation"));
  EXPECT_FALSE(
      HasInstruction(rule->Apply(sch, sch.GetBlock("D"))[0].trace(), "SampleComputeLocation"));
}

TEST(RandomComputeLocation, LeavesACopyIntoAlignedRowsAtTheRoot) {
  // MultiLevelTiling's copy of B into aligned rows is made to be done once: under a tile loop it
  // would be redone per tile.
  PrimFunc f = ParsePrimFunc(GemmText(64, 20), "test");
  int copies = 0;
  for (Schedule& sch : ApplyRule(*MakeMultiLevelTiling(TestConfig()), f, "C")) {
    if (FindBlock(sch.func(), "B_global") == nullptr) continue;
    ++copies;
    std::vector<Schedule> out = MakeRandomComputeLocation()->Apply(sch, sch.GetBlock("B_global"));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_FALSE(HasInstruction(out[0].trace(), "SampleComputeLocation"));
    EXPECT_EQ(LoopDepth(out[0].func(), "B_global"), 2u);
  }
  EXPECT_EQ(copies, 3);
}

TEST(RandomComputeLocation, AlsoPlacesTheRFactorProducer) {
  PrimFunc f = Parse(testing::kNorm);
  Schedule rf = ApplyRule(*MakeAddRFactor(TestConfig()), f, "S")[0];
  std::vector<Schedule> out = MakeRandomComputeLocation()->Apply(rf, rf.GetBlock("S"));
  int samples = 0;
  for (const Instruction& inst : out[0].trace().insts()) {
    samples += inst.kind->name == "SampleComputeLocation" ? 1 : 0;
  }
  EXPECT_EQ(samples, 2);
  EXPECT_EQ(FindBlock(out[0].func(), "S")->annotations.count(kAnnRandomComputeProducer), 0u);
  EXPECT_EQ(CompareOutputs(f, out[0].func()), "");
}

// A stage `P = select(test, A[...], 0.0)` read by a sum; `test` is the text of the test.
std::string MaskedSum(const std::string& test) {
  return R"(@prim_func
def masked(A: Buffer((8,), float32), M: Buffer((8,), int32), R: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        P = alloc_buffer((8,), float32)
        for i in range(8):
            with block("P"):
                vi = axis.spatial(8, i)
                reads(A[vi], M[vi])
                writes(P[vi])
                P[vi] = select()" +
         test + R"(, A[max(vi - 1, 0)], 0.0)
        for k in range(8):
            with block("R"):
                vk = axis.reduce(8, k)
                reads(P[vk])
                writes(R[0])
                with init():
                    R[0] = 0.0
                R[0] = R[0] + P[vk]
)";
}

TEST(RandomComputeLocation, AddsASpaceWithAZeroPaddingInlined) {
  PrimFunc f = ParsePrimFunc(MaskedSum("vi >= 1"), "test");
  std::vector<Schedule> out = ApplyRule(*MakeRandomComputeLocation(), f, "P");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(FindBlock(out[1].func(), "P"), nullptr);
  EXPECT_EQ(CompareOutputs(f, out[1].func()), "");
}

TEST(RandomComputeLocation, ADataMaskIsNotAPadding) {
  PrimFunc f = ParsePrimFunc(MaskedSum("M[vi] > 0"), "test");
  EXPECT_EQ(ApplyRule(*MakeRandomComputeLocation(), f, "P").size(), 1u);
}

// ---- PostOrderApply.

// Records the blocks it is applied to; forks every non-root block into two copies.
class RecordingRule : public ScheduleRule {
 public:
  std::string name() const override { return "Recording"; }
  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    visited.push_back(sch.BlockName(block));
    if (visited.back() == "root") return {sch};
    return {sch, sch};
  }
  std::vector<std::string> visited;
};

TEST(PostOrderApply, VisitsConsumersBeforeProducersAndForksOnEveryResult) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  auto rule = std::make_shared<RecordingRule>();
  SpaceGenerator gen({rule}, {}, {});
  std::vector<Schedule> spaces = gen.GenerateDesignSpaces(f, 1);
  EXPECT_EQ(spaces.size(), 8u);  // D, E and T fork in two
  std::vector<std::string> first(rule->visited.begin(), rule->visited.begin() + 4);
  EXPECT_EQ(first, (std::vector<std::string>{"D", "E", "T", "root"}));
}

TEST(PostOrderApply, SkipsBlocksThatAnEarlierRuleRemoved) {
  PrimFunc f = Parse(testing::kGemmBiasRelu);
  auto rule = std::make_shared<RecordingRule>();
  SpaceGenerator gen({MakeAutoInline(), rule}, {}, {});
  gen.GenerateDesignSpaces(f, 1);
  EXPECT_EQ(std::count(rule->visited.begin(), rule->visited.end(), "E"), 0);
}

}  // namespace
}  // namespace tirtune
