// parallel, vectorize, unroll, bind: the new kind, and the data-parallel precondition.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(ForKind, ParallelVectorizeUnrollMarkTheLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Parallel(loops[0]);
  sch.Unroll(loops[2]);
  sch.Vectorize(loops[1]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in parallel(16):
            for j in vectorized(12):
                for k in unroll(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ForKind, BindSetsTheThreadAxis) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Bind(loops[0], "blockIdx.x");
  EXPECT_EQ(sch.Get(loops[0])->thread_tag, "blockIdx.x");
  EXPECT_EQ(sch.Get(loops[0])->for_kind, ForKind::kThreadBinding);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ForKind, ParallelRejectsReductionLoop) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "WrongBlockIterTypeError", "reduction iterator 'vk'",
                      [&] { sch.Parallel(loops[2]); });
}

TEST(ForKind, VectorizeRejectsReductionLoop) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "WrongBlockIterTypeError", "cannot vectorize loop 'k'",
                      [&] { sch.Vectorize(loops[2]); });
}

TEST(ForKind, BindRejectsUnknownAxis) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "UnknownThreadAxisError", "threadIdx.w",
                      [&] { sch.Bind(loops[0], "threadIdx.w"); });
}

TEST(ForKind, UnrollAcceptsReductionLoopOnce) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Unroll(loops[2]);
  ExpectScheduleError(sch, "NotSerialLoopError", "is unroll", [&] { sch.Unroll(loops[2]); });
}

}  // namespace
}  // namespace tirtune
