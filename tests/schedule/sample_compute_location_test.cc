// sample_compute_location: candidates are exactly the places where compute_at (or inlining)
// succeeds; decisions replay; invalid decisions are refused.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

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

TEST(SampleComputeLocation, EveryCandidateIsReachedAndValid) {
  PrimFunc f = ParseFunc(kTwoStage);
  std::set<int64_t> seen;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Schedule sch(f, seed);
    BlockRV b = sch.GetBlock("B");
    LoopRV where = sch.SampleComputeLocation(b);
    seen.insert(sch.trace().insts().back().decision.get<int64_t>());
    sch.ComputeAt(b, where);
    ExpectTraceRoundTrip(sch, f);
    ExpectSameNumbers(f, sch.func());
  }
  // root (-1), inline (-2), i0 (0) and i1 (1).
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 0, 1}));
}

TEST(SampleComputeLocation, InlineDecisionInlines) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  LoopRV where = sch.SampleComputeLocation(b, /*decision=*/int64_t{-2});
  sch.ComputeAt(b, where);
  EXPECT_EQ(sch.state().FindBlock("B"), nullptr);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(SampleComputeLocation, MutatedDecisionReplays) {
  PrimFunc f = ParseFunc(kTwoStage);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  LoopRV where = sch.SampleComputeLocation(b, /*decision=*/int64_t{-1});
  sch.ComputeAt(b, where);
  EXPECT_TRUE(StructuralEqual(sch.func(), f));  // root: left where it was
  // Change the decision to the inner loop and replay.
  Trace mutated = sch.trace().WithDecision(1, 1);
  Schedule replay(f);
  mutated.ApplyTo(replay);
  auto loops = replay.GetLoops(replay.GetBlock("B"));
  EXPECT_EQ(loops.size(), 2u);
  ExpectSameNumbers(f, replay.func());
}

TEST(SampleComputeLocation, RejectsAnUnavailableDecision) {
  Schedule sch(ParseFunc(kTwoStage));
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "InvalidDecisionError", "not available",
                      [&] { sch.SampleComputeLocation(b, int64_t{2}); });
}

TEST(SampleComputeLocation, OutputBlockCanOnlyStayAtRoot) {
  Schedule sch(ParseFunc(kTwoStage));
  BlockRV c = sch.GetBlock("C");
  sch.SampleComputeLocation(c);
  EXPECT_EQ(sch.trace().insts().back().decision.get<int64_t>(), -1);
}

}  // namespace
}  // namespace tirtune
