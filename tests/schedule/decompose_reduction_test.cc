// decompose_reduction: the init moves into `<name>_init` before the given loop, under copies of
// the loops its bindings need; the loop must not be below a reduction loop.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(DecomposeReduction, AtTheOutermostLoopCopiesTheSpatialLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  BlockRV init = sch.DecomposeReduction(c, loops[0]);
  EXPECT_EQ(sch.BlockName(init), "C_init");
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i_init in range(16):
            for j_init in range(12):
                with block("C_init"):
                    vi = axis.spatial(16, i_init)
                    vj = axis.spatial(12, j_init)
                    reads()
                    writes(C[vi, vj])
                    C[vi, vj] = 0.0
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(DecomposeReduction, AtTheReductionLoopNeedsNoNewLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.DecomposeReduction(c, loops[2]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(12):
                with block("C_init"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads()
                    writes(C[vi, vj])
                    C[vi, vj] = 0.0
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// Tiled: i split with a tail, reduction loop between spatial loops. The init keeps the spatial
// guard (over its copied loops) and drops the reduction loops.
TEST(DecomposeReduction, TiledNestKeepsSpatialGuardAndDropsReductionLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  auto i = sch.Split(loops[0], {std::monostate{}, int64_t{5}});
  sch.Reorder({loops[2], i[1]});  // i_0, k, j, i_1
  sch.DecomposeReduction(c, i[0]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i_0_init in range(4):
            for j_init in range(12):
                for i_1_init in range(5):
                    with block("C_init"):
                        vi = axis.spatial(16, i_0_init * 5 + i_1_init)
                        vj = axis.spatial(12, j_init)
                        where(i_0_init * 5 + i_1_init < 16)
                        reads()
                        writes(C[vi, vj])
                        C[vi, vj] = 0.0
        for i_0 in range(4):
            for k in range(8):
                for j in range(12):
                    for i_1 in range(5):
                        with block("C"):
                            vi = axis.spatial(16, i_0 * 5 + i_1)
                            vj = axis.spatial(12, j)
                            vk = axis.reduce(8, k)
                            where(i_0 * 5 + i_1 < 16)
                            reads(A[vi, vk], B[vk, vj])
                            writes(C[vi, vj])
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// A reduction-loop guard from splitting k is dropped from the init's predicate.
TEST(DecomposeReduction, DropsGuardsOverReductionLoops) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.Split(loops[2], {std::monostate{}, int64_t{3}});
  sch.DecomposeReduction(c, loops[1]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j_init in range(12):
                with block("C_init"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j_init)
                    reads()
                    writes(C[vi, vj])
                    C[vi, vj] = 0.0
            for j in range(12):
                for k_0 in range(3):
                    for k_1 in range(3):
                        with block("C"):
                            vi = axis.spatial(16, i)
                            vj = axis.spatial(12, j)
                            vk = axis.reduce(8, k_0 * 3 + k_1)
                            where(k_0 * 3 + k_1 < 8)
                            reads(A[vi, vk], B[vk, vj])
                            writes(C[vi, vj])
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// After fuse_reduction_epilogue the init reads the bias; the init block's reads say so.
TEST(DecomposeReduction, InitThatReadsABias) {
  PrimFunc f = ParseFunc(R"(@prim_func
def gemm_bias(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((12,), float32), D: Buffer((16, 12), float32)):
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
                with block("add"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads(temp[vi, vj], C[vj])
                    writes(D[vi, vj])
                    D[vi, vj] = temp[vi, vj] + C[vj]
)");
  Schedule sch(f);
  BlockRV matmul = sch.GetBlock("matmul");
  sch.FuseReductionEpilogue(matmul, sch.GetBlock("add"));
  sch.DecomposeReduction(matmul, sch.GetLoops(matmul)[1]);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm_bias(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((12,), float32), D: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j_init in range(12):
                with block("matmul_init"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j_init)
                    reads(C[vj])
                    writes(D[vi, vj])
                    D[vi, vj] = C[vj]
            for j in range(12):
                for k in range(8):
                    with block("matmul"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(C[vj], A[vi, vk], B[vk, vj])
                        writes(D[vi, vj])
                        D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(DecomposeReduction, RejectsLoopBelowAReductionLoop) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.Reorder({loops[2], loops[0]});  // k, j, i
  ExpectScheduleError(sch, "LoopAboveReductionError",
                      "loop 'k' above it drives reduction iterator 'vk'",
                      [&] { sch.DecomposeReduction(c, loops[1]); });
}

TEST(DecomposeReduction, RejectsLoopThatIsNotAboveTheBlock) {
  Schedule sch(ParseFunc(R"(@prim_func
def two_blocks(A: Buffer((16, 8), float32), B: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for k in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(B[vi])
                    with init():
                        B[vi] = 0.0
                    B[vi] = B[vi] + A[vi, vk]
        for x in range(16):
            with block("C"):
                vi = axis.spatial(16, x)
                reads(A[vi, 0])
                writes(C[vi])
                C[vi] = A[vi, 0]
)"));
  BlockRV b = sch.GetBlock("B");
  LoopRV x = sch.GetLoops(sch.GetBlock("C"))[0];
  ExpectScheduleError(sch, "LoopNotAboveBlockError", "loop 'x' is not one",
                      [&] { sch.DecomposeReduction(b, x); });
}

TEST(DecomposeReduction, RejectsBlockWithoutInit) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.DecomposeReduction(c, loops[0]);
  ExpectScheduleError(sch, "NotReductionBlockError", "block 'C' has no init",
                      [&] { sch.DecomposeReduction(c, loops[0]); });
}

}  // namespace
}  // namespace tirtune
