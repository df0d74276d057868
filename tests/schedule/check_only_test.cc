// Schedule::CanApply: for every transforming primitive, a legal and an illegal call, where CanApply
// must agree with really calling the primitive and leave the schedule untouched; placeholders and
// restored state; and a randomized agreement test over workloads of the operator library.
#include <fmt/format.h>

#include <functional>

#include "gemm_text.h"
#include "random_step.h"
#include "schedule_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

using Step = std::function<void(Schedule&)>;

const char* kTwoStage = R"(@prim_func
def two_stage(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] * 2.0
        for i0 in range(4):
            for i1 in range(4):
                with block("C"):
                    vi = axis.spatial(16, i0 * 4 + i1)
                    reads(B[vi])
                    writes(C[vi])
                    C[vi] = B[vi] + 1.0
)";

// GEMM into `temp`, then the epilogue `D[vi, vj] = EPILOGUE` with a bias C[vj].
std::string GemmWithEpilogue(const std::string& epilogue) {
  return R"(@prim_func
def gemm_epilogue(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((12,), float32), D: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        temp = alloc_buffer((16, 12), float32)
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("matmul"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(temp[vi, vj])
                        with init():
                            temp[vi, vj] = 0.0
                        temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vk, vj]
        for i in range(16):
            for j in range(12):
                with block("epilogue"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads(temp[vi, vj], C[vj])
                    writes(D[vi, vj])
                    D[vi, vj] = )" +
         epilogue + "\n";
}

// Whether `step` succeeds when really run (on a copy of `sch`).
bool RunsOnACopy(const Schedule& sch, const Step& step) {
  Schedule copy = sch.Copy();
  PrimFunc before = copy.func();
  try {
    step(copy);
    return true;
  } catch (const ScheduleError&) {
    EXPECT_TRUE(copy.func().same_as(before)) << "a failed primitive changed the function";
    return false;
  }
}

// Expects CanApply(step) to be `expected`, to agree with really running the step, and to leave
// the function, the trace and the random variables of `sch` as they were.
void ExpectCanApply(Schedule& sch, bool expected, const Step& step) {
  PrimFunc func = sch.func();
  std::string trace = sch.trace().ToJson().dump();
  EXPECT_EQ(sch.CanApply(step), expected);
  EXPECT_TRUE(sch.func().same_as(func)) << "CanApply changed the function";
  EXPECT_EQ(sch.trace().ToJson().dump(), trace) << "CanApply recorded instructions";
  EXPECT_EQ(RunsOnACopy(sch, step), expected) << "CanApply disagrees with running the step";
}

// ---- One legal and one illegal call per primitive.

TEST(CheckOnly, Split) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectCanApply(sch, true, [&](Schedule& s) {
    s.Split(loops[0], {std::monostate{}, int64_t{4}});
  });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Split(loops[0], {int64_t{2}, int64_t{4}}); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Split(loops[0], {int64_t{0}, int64_t{4}}); });
}

TEST(CheckOnly, Fuse) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Fuse({loops[0], loops[1]}); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Fuse({loops[0], loops[2]}); });
}

TEST(CheckOnly, Reorder) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Reorder({loops[2], loops[0]}); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Reorder({loops[0], loops[0]}); });
}

TEST(CheckOnly, ParallelVectorizeUnrollBind) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Parallel(loops[0]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Parallel(loops[2]); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Vectorize(loops[1]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Vectorize(loops[2]); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Bind(loops[0], "blockIdx.x"); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Bind(loops[0], "threadIdx.w"); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Unroll(loops[2]); });
  sch.Unroll(loops[2]);
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Unroll(loops[2]); });
}

TEST(CheckOnly, AnnotateAndUnannotate) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Annotate(loops[0], "pragma_unroll", 16); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Annotate(block, "rule", "matmul"); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Unannotate(loops[0], "pragma_unroll"); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Unannotate(block, "rule"); });
  sch.Annotate(loops[0], "pragma_unroll", 16);
  sch.Annotate(block, "rule", "matmul");
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Unannotate(loops[0], "pragma_unroll"); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.Unannotate(block, "rule"); });
  // A loop that no longer exists cannot be annotated.
  sch.Fuse({loops[0], loops[1]});
  ExpectCanApply(sch, false, [&](Schedule& s) { s.Annotate(loops[0], "pragma_unroll", 16); });
}

TEST(CheckOnly, AddUnitLoop) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  ExpectCanApply(sch, true, [&](Schedule& s) { s.AddUnitLoop(block); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.AddUnitLoop(loops[1]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.AddUnitLoop(s.GetBlock("root")); });
}

TEST(CheckOnly, ComputeAtAndReverseComputeAt) {
  Schedule sch(ParseFunc(kTwoStage));
  BlockRV b = sch.GetBlock("B");
  BlockRV c = sch.GetBlock("C");
  auto b_loops = sch.GetLoops(b);
  auto c_loops = sch.GetLoops(c);
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ComputeAt(b, c_loops[0]); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ComputeAt(b, c_loops[1], true); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ComputeAt(b, b_loops[0]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ComputeAt(c, b_loops[0]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ComputeAt(b, c_loops[0], false, 5); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ReverseComputeAt(c, b_loops[0]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ReverseComputeAt(c, c_loops[0]); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ReverseComputeAt(b, c_loops[0]); });
}

TEST(CheckOnly, ComputeAtRootAndInlineLocations) {
  Schedule sch(ParseFunc(kTwoStage));
  BlockRV b = sch.GetBlock("B");
  BlockRV c = sch.GetBlock("C");
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ComputeAt(b, LoopRV::Root()); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ComputeAt(b, LoopRV::Inline()); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ComputeAt(c, LoopRV::Inline()); });
}

TEST(CheckOnly, ComputeInlineAndReverseComputeInline) {
  Schedule sch(ParseFunc(kTwoStage));
  BlockRV b = sch.GetBlock("B");
  BlockRV c = sch.GetBlock("C");
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ComputeInline(b); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ComputeInline(c); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.ReverseComputeInline(c); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.ReverseComputeInline(b); });
}

TEST(CheckOnly, CacheReadAndCacheWrite) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV block = sch.GetBlock("C");
  ExpectCanApply(sch, true, [&](Schedule& s) { s.CacheRead(block, 0, StorageScope::kShared); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.CacheRead(block, 2, StorageScope::kShared); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.CacheWrite(block, 0, StorageScope::kLocal); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.CacheWrite(block, 1, StorageScope::kLocal); });
  ExpectCanApply(sch, false,
                 [&](Schedule& s) { s.CacheWrite(s.GetBlock("root"), 0, StorageScope::kLocal); });
}

TEST(CheckOnly, SetScopeAndStorageAlign) {
  Schedule sch(ParseFunc(kTwoStage));
  BlockRV b = sch.GetBlock("B");
  BlockRV c = sch.GetBlock("C");
  ExpectCanApply(sch, true, [&](Schedule& s) { s.SetScope(b, 0, StorageScope::kShared); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.SetScope(c, 0, StorageScope::kShared); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.StorageAlign(b, 0, 0, 32, 8); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.StorageAlign(b, 0, 0, 0, 0); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.StorageAlign(b, 0, 1, 32, 8); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.StorageAlign(c, 0, 0, 32, 8); });
}

TEST(CheckOnly, RFactorAndDecomposeReduction) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  ExpectCanApply(sch, true, [&](Schedule& s) { s.RFactor(loops[2], 0); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.RFactor(loops[0], 0); });
  ExpectCanApply(sch, false, [&](Schedule& s) { s.RFactor(loops[2], 5); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.DecomposeReduction(block, loops[0]); });
  ExpectCanApply(sch, true, [&](Schedule& s) { s.DecomposeReduction(block, loops[2]); });
  sch.Reorder({loops[2], loops[0]});
  ExpectCanApply(sch, false, [&](Schedule& s) { s.DecomposeReduction(block, loops[0]); });
}

TEST(CheckOnly, FuseReductionEpilogue) {
  Schedule bias(ParseFunc(GemmWithEpilogue("temp[vi, vj] + C[vj]")));
  ExpectCanApply(bias, true, [&](Schedule& s) {
    s.FuseReductionEpilogue(s.GetBlock("matmul"), s.GetBlock("epilogue"));
  });
  Schedule relu(ParseFunc(GemmWithEpilogue("max(temp[vi, vj] + C[vj], 0.0)")));
  ExpectCanApply(relu, false, [&](Schedule& s) {
    s.FuseReductionEpilogue(s.GetBlock("matmul"), s.GetBlock("epilogue"));
  });
}

// ---- What CanApply leaves behind.

TEST(CheckOnly, PrimitivesReturnPlaceholders) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  std::vector<LoopRV> parts;
  BlockRV cache;
  EXPECT_TRUE(sch.CanApply([&](Schedule& s) {
    parts = s.Split(loops[0], {std::monostate{}, int64_t{4}});
    cache = s.CacheRead(block, 0, StorageScope::kShared);
  }));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].id, kPlaceholderRVId);
  EXPECT_EQ(cache.id, kPlaceholderRVId);
  // Using a placeholder is a bug of the caller, reported as such; the schedule stays intact.
  PrimFunc before = sch.func();
  EXPECT_THROW(sch.CanApply([&](Schedule& s) {
    auto tiles = s.Split(loops[0], {std::monostate{}, int64_t{4}});
    s.Parallel(tiles[0]);
  }),
               InternalError);
  EXPECT_FALSE(sch.check_only());
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_THROW(sch.Get(parts[0]), InternalError);
}

TEST(CheckOnly, LookupsAndSamplingInsideTheStepLeaveNothingBehind) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f, /*seed=*/5);
  Schedule twin(f, /*seed=*/5);
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(sch.CanApply([](Schedule& s) {
      LoopRV loop = s.GetLoops(s.GetBlock("C"))[0];
      auto tiles = s.SamplePerfectTile(loop, 2, 16);
      s.Split(loop, {tiles[0], tiles[1]});
    }));
  }
  EXPECT_TRUE(sch.trace().empty());
  // The same random variable ids, samples and loop names follow as without the checks.
  for (Schedule* s : {&sch, &twin}) {
    LoopRV loop = s->GetLoops(s->GetBlock("C"))[0];
    auto tiles = s->SamplePerfectTile(loop, 2, 16);
    s->Split(loop, {tiles[0], tiles[1]});
  }
  EXPECT_EQ(Print(sch.func()), Print(twin.func()));
  EXPECT_EQ(sch.trace().ToJson(), twin.trace().ToJson());
}

TEST(CheckOnly, NestedInSampleComputeLocation) {
  // SampleComputeLocation tries its candidates with CanApply; inside a step it nests.
  Schedule sch(ParseFunc(kTwoStage));
  ExpectCanApply(sch, true, [](Schedule& s) {
    BlockRV b = s.GetBlock("B");
    s.ComputeAt(b, s.SampleComputeLocation(b));
  });
  EXPECT_FALSE(sch.check_only());
}

// ---- Randomized agreement.

// A random step from random_step.h, or one of the primitives it does not draw.
void AnyRandomStep(Schedule& sch, RandomEngine& rng) {
  if (rng.UniformInt(0, 4) != 0) return RandomStep(sch, rng);
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) names.push_back(b->block->name);
  BlockRV block = sch.GetBlock(Pick(rng, names));
  std::vector<LoopRV> loops = sch.GetLoops(block);
  int index = static_cast<int>(rng.UniformInt(-1, 3));
  StorageScope scopes[] = {StorageScope::kGlobal, StorageScope::kLocal, StorageScope::kShared};
  switch (rng.UniformInt(0, 6)) {
    case 0:
      sch.SetScope(block, index, scopes[rng.UniformInt(0, 3)]);
      return;
    case 1:
      sch.StorageAlign(block, index, static_cast<int>(rng.UniformInt(-3, 3)),
                       static_cast<int>(rng.UniformInt(0, 33)),
                       static_cast<int>(rng.UniformInt(0, 9)));
      return;
    case 2:
      if (!loops.empty()) sch.Bind(Pick(rng, loops), rng.UniformInt(0, 2) ? "threadIdx.x" : "x");
      return;
    case 3:
      if (!loops.empty()) sch.Unannotate(Pick(rng, loops), "pragma_auto_unroll_max_step");
      return;
    case 4:
      if (!loops.empty()) sch.AddUnitLoop(Pick(rng, loops));
      return;
    case 5: {  // at a loop of any block, with an explicit index
      std::vector<LoopRV> others = sch.GetLoops(sch.GetBlock(Pick(rng, names)));
      if (!others.empty()) sch.ReverseComputeAt(block, Pick(rng, others), false, index);
      return;
    }
  }
}

class CheckOnlyAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckOnlyAgreement, CanApplyPredictsEveryRandomStep) {
  const WorkloadDef* def = FindWorkload(GetParam());
  ASSERT_NE(def, nullptr);
  PrimFunc original = def->build(def->small_shape);
  int legal = 0, illegal = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Schedule sch(original, /*seed=*/trial);
    RandomEngine rng(5000 + trial);
    for (int s = 0; s < 8; ++s) {
      // The step's own choices come from a copy of `rng`, so both runs make the same ones.
      RandomEngine choices = rng.Fork();
      Step step = [&choices](Schedule& target) {
        RandomEngine r = choices;
        AnyRandomStep(target, r);
      };
      PrimFunc before = sch.func();
      std::string trace = sch.trace().ToJson().dump();
      bool predicted = sch.CanApply(step);
      ASSERT_TRUE(sch.func().same_as(before));
      ASSERT_EQ(sch.trace().ToJson().dump(), trace);
      Schedule next = sch.Copy();
      bool applied = true;
      try {
        step(next);
      } catch (const ScheduleError&) {
        applied = false;
      }
      ASSERT_EQ(predicted, applied)
          << fmt::format("workload {} trial {} step {}; trace so far:\n{}", GetParam(), trial, s,
                         sch.trace().ToText());
      (applied ? legal : illegal) += 1;
      if (applied) sch = next;
    }
  }
  // Both answers must be exercised for the agreement to mean something.
  EXPECT_GT(legal, 50) << GetParam();
  EXPECT_GT(illegal, 50) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Workloads, CheckOnlyAgreement,
                         ::testing::Values("gemm", "cbr", "softmax", "conv2d_transpose"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tirtune
