// add_unit_loop: a loop of extent 1 above a block or a loop, and the root-block error.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(AddUnitLoop, AboveABlockWrapsTheRealize) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  LoopRV u = sch.AddUnitLoop(sch.GetBlock("C"));
  EXPECT_EQ(sch.Get(u)->loop_var->name, "u");
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    for u in range(1):
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

TEST(AddUnitLoop, AboveALoopWrapsTheLoop) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  LoopRV u = sch.AddUnitLoop(loops[1]);
  auto after = sch.GetLoops(sch.GetBlock("C"));
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(sch.Get(after[1]), sch.Get(u));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for u in range(1):
                for j in range(12):
                    for k in range(8):
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

TEST(AddUnitLoop, GivesALoopToABlockWithoutLoops) {
  const char* text = R"(@prim_func
def scalar(A: Buffer((1,), float32), B: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        with block("B"):
            reads(A[0])
            writes(B[0])
            B[0] = A[0] + 1.0
)";
  PrimFunc f = ParseFunc(text);
  Schedule sch(f);
  BlockRV b = sch.GetBlock("B");
  EXPECT_TRUE(sch.GetLoops(b).empty());
  sch.AddUnitLoop(b);
  EXPECT_EQ(sch.GetLoops(b).size(), 1u);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def scalar(A: Buffer((1,), float32), B: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        for u in range(1):
            with block("B"):
                reads(A[0])
                writes(B[0])
                B[0] = A[0] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(AddUnitLoop, TwiceGivesTwoDistinctLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  LoopRV u0 = sch.AddUnitLoop(c);
  LoopRV u1 = sch.AddUnitLoop(c);
  EXPECT_NE(sch.Get(u0), sch.Get(u1));
  EXPECT_EQ(sch.GetLoops(c).size(), 5u);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(AddUnitLoop, RejectsTheRootBlock) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV root = sch.GetBlock("root");
  ExpectScheduleError(sch, "RootBlockUnitLoopError", "it is the root block",
                      [&] { sch.AddUnitLoop(root); });
}

}  // namespace
}  // namespace tirtune
