// rfactor: the partial-result block and the final reduction for the inner and the outer part of
// a split reduction, other reducers, the factor axis, and the errors.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

// kGemm with its reduction loop split into k_0 (2) and k_1 (4).
const char* kSplitGemm = R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(12):
                for k_0 in range(2):
                    for k_1 in range(4):
                        with block("C"):
                            vi = axis.spatial(16, i)
                            vj = axis.spatial(12, j)
                            vk = axis.reduce(8, k_0 * 4 + k_1)
                            reads(A[vi, vk], B[vk, vj])
                            writes(C[vi, vj])
                            with init():
                                C[vi, vj] = 0.0
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

const char* kRowMax = R"(@prim_func
def row_max(A: Buffer((8, 32), float32), M: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            for k_0 in range(4):
                for k_1 in range(8):
                    with block("M"):
                        vi = axis.spatial(8, i)
                        vk = axis.reduce(32, k_0 * 8 + k_1)
                        reads(A[vi, vk])
                        writes(M[vi])
                        with init():
                            M[vi] = -inf
                        M[vi] = max(M[vi], A[vi, vk])
)";

TEST(RFactor, InnerLoopOfASplitReduction) {
  PrimFunc f = ParseFunc(kSplitGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  BlockRV rf = sch.RFactor(loops[3], /*factor_axis=*/0);
  EXPECT_EQ(sch.BlockName(rf), "C_rf");
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        C_rf = alloc_buffer((4, 16, 12), float32)
        for i in range(16):
            for j in range(12):
                for k_0 in range(2):
                    for k_1 in range(4):
                        with block("C_rf"):
                            vk_1 = axis.spatial(4, k_1)
                            vi = axis.spatial(16, i)
                            vj = axis.spatial(12, j)
                            vk_0 = axis.reduce(2, k_0)
                            reads(A[vi, vk_0 * 4 + vk_1], B[vk_0 * 4 + vk_1, vj])
                            writes(C_rf[vk_1, vi, vj])
                            with init():
                                C_rf[vk_1, vi, vj] = 0.0
                            C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, vj]
        for i in range(16):
            for j in range(12):
                for k_1 in range(4):
                    with block("C"):
                        vk_1 = axis.reduce(4, k_1)
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        reads(C_rf[vk_1, vi, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(RFactor, OuterLoopOfASplitReductionAtAMiddleAxis) {
  PrimFunc f = ParseFunc(kSplitGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.RFactor(loops[2], /*factor_axis=*/1);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        C_rf = alloc_buffer((16, 2, 12), float32)
        for i in range(16):
            for j in range(12):
                for k_0 in range(2):
                    for k_1 in range(4):
                        with block("C_rf"):
                            vk_0 = axis.spatial(2, k_0)
                            vi = axis.spatial(16, i)
                            vj = axis.spatial(12, j)
                            vk_1 = axis.reduce(4, k_1)
                            reads(A[vi, vk_0 * 4 + vk_1], B[vk_0 * 4 + vk_1, vj])
                            writes(C_rf[vi, vk_0, vj])
                            with init():
                                C_rf[vi, vk_0, vj] = 0.0
                            C_rf[vi, vk_0, vj] = C_rf[vi, vk_0, vj] + A[vi, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, vj]
        for i in range(16):
            for j in range(12):
                for k_0 in range(2):
                    with block("C"):
                        vk_0 = axis.reduce(2, k_0)
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        reads(C_rf[vi, vk_0, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + C_rf[vi, vk_0, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(RFactor, WholeReductionLoopLeavesOnlySpatialIterators) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  BlockRV rf = sch.RFactor(loops[2], /*factor_axis=*/-1);
  const BlockNode* block = sch.Get(rf)->block.get();
  for (const IterVar& iv : block->iter_vars) EXPECT_EQ(iv.kind, IterKind::kSpatial);
  EXPECT_EQ(block->writes[0].buffer->shape.size(), 3u);
  EXPECT_TRUE(IsConstInt(block->writes[0].buffer->shape[2], 8));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(RFactor, FactoredLoopCanThenBeParallelized) {
  PrimFunc f = ParseFunc(kSplitGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.RFactor(loops[3], /*factor_axis=*/0);
  sch.Reorder({loops[3], loops[2]});
  sch.Vectorize(loops[3]);
  EXPECT_EQ(sch.Get(loops[3])->for_kind, ForKind::kVectorized);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(RFactor, MaxReduction) {
  PrimFunc f = ParseFunc(kRowMax);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("M"));
  sch.RFactor(loops[2], /*factor_axis=*/1);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def row_max(A: Buffer((8, 32), float32), M: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        M_rf = alloc_buffer((8, 8), float32)
        for i in range(8):
            for k_0 in range(4):
                for k_1 in range(8):
                    with block("M_rf"):
                        vk_1 = axis.spatial(8, k_1)
                        vi = axis.spatial(8, i)
                        vk_0 = axis.reduce(4, k_0)
                        reads(A[vi, vk_0 * 8 + vk_1])
                        writes(M_rf[vi, vk_1])
                        with init():
                            M_rf[vi, vk_1] = -inf
                        M_rf[vi, vk_1] = max(M_rf[vi, vk_1], A[vi, vk_0 * 8 + vk_1])
        for i in range(8):
            for k_1 in range(8):
                with block("M"):
                    vk_1 = axis.reduce(8, k_1)
                    vi = axis.spatial(8, i)
                    reads(M_rf[vi, vk_1])
                    writes(M[vi])
                    with init():
                        M[vi] = -inf
                    M[vi] = max(M[vi], M_rf[vi, vk_1])
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(RFactor, MinReductionWithTheLargestFloatAsInit) {
  const char* text = R"(@prim_func
def row_min(A: Buffer((4, 16), float32), M: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for k in range(16):
                with block("M"):
                    vi = axis.spatial(4, i)
                    vk = axis.reduce(16, k)
                    reads(A[vi, vk])
                    writes(M[vi])
                    with init():
                        M[vi] = 3.4028234663852886e+38
                    M[vi] = min(A[vi, vk], M[vi])
)";
  PrimFunc f = ParseFunc(text);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("M"));
  auto parts = sch.Split(loops[1], {int64_t{4}, std::monostate{}});
  sch.RFactor(parts[0], /*factor_axis=*/0);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(RFactor, RejectsALoopOfASpatialIterator) {
  Schedule sch(ParseFunc(kSplitGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "SpatialIterUsesRFactorLoopError",
                      "loop 'j': block 'C' binds a spatial iterator to it",
                      [&] { sch.RFactor(loops[1], /*factor_axis=*/0); });
}

TEST(RFactor, RejectsALoopNoIteratorUses) {
  Schedule sch(ParseFunc(kGemm));
  LoopRV u = sch.AddUnitLoop(sch.GetBlock("C"));
  ExpectScheduleError(sch, "NotReductionLoopError", "no reduction iterator of block 'C' uses it",
                      [&] { sch.RFactor(u, /*factor_axis=*/0); });
}

TEST(RFactor, RejectsALoopUsedByBothKindsOfIterators) {
  Schedule sch(ParseFunc(kSplitGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Fuse({loops[1], loops[2]});
  ExpectScheduleError(sch, "LoopTouchedByBothIterKindsError",
                      "is used by both spatial and reduction iterators of block 'C'",
                      [&] { sch.RFactor(loops[3], /*factor_axis=*/0); });
}

TEST(RFactor, RejectsANonReductionBlock) {
  const char* text = R"(@prim_func
def add_one(A: Buffer((8,), float32), B: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            with block("B"):
                vi = axis.spatial(8, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] + 1.0
)";
  Schedule sch(ParseFunc(text));
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  ExpectScheduleError(sch, "NotReductionBlockError",
                      "block 'B', which is not a reduction: it has no reduction iterator",
                      [&] { sch.RFactor(loops[0], /*factor_axis=*/0); });
}

TEST(RFactor, RejectsAnInitThatIsNotTheIdentity) {
  const char* text = R"(@prim_func
def sum_plus_one(A: Buffer((4, 8), float32), S: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for k in range(8):
                with block("S"):
                    vi = axis.spatial(4, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(S[vi])
                    with init():
                        S[vi] = 1.0
                    S[vi] = S[vi] + A[vi, vk]
)";
  Schedule sch(ParseFunc(text));
  auto loops = sch.GetLoops(sch.GetBlock("S"));
  ExpectScheduleError(sch, "UnsupportedReducerError",
                      "the init value is not the identity of the reducer",
                      [&] { sch.RFactor(loops[1], /*factor_axis=*/0); });
}

TEST(RFactor, RejectsAnUpdateThatIsNotAReducer) {
  const char* text = R"(@prim_func
def running_diff(A: Buffer((4, 8), float32), S: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for k in range(8):
                with block("S"):
                    vi = axis.spatial(4, i)
                    vk = axis.reduce(8, k)
                    reads(A[vi, vk])
                    writes(S[vi])
                    with init():
                        S[vi] = 0.0
                    S[vi] = S[vi] - A[vi, vk]
)";
  Schedule sch(ParseFunc(text));
  auto loops = sch.GetLoops(sch.GetBlock("S"));
  ExpectScheduleError(sch, "UnsupportedReducerError",
                      "the update is not a sum, product, min or max",
                      [&] { sch.RFactor(loops[1], /*factor_axis=*/0); });
}

TEST(RFactor, RejectsAnotherBlockInTheLoopNest) {
  const char* text = R"(@prim_func
def scaled_sum(A: Buffer((4, 8), float32), S: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((4, 8), float32)
        for i in range(4):
            for k in range(8):
                with block("T"):
                    vi = axis.spatial(4, i)
                    vk = axis.spatial(8, k)
                    reads(A[vi, vk])
                    writes(T[vi, vk])
                    T[vi, vk] = A[vi, vk] * 2.0
            for k in range(8):
                with block("S"):
                    vi = axis.spatial(4, i)
                    vk = axis.reduce(8, k)
                    reads(T[vi, vk])
                    writes(S[vi])
                    with init():
                        S[vi] = 0.0
                    S[vi] = S[vi] + T[vi, vk]
)";
  Schedule sch(ParseFunc(text));
  auto loops = sch.GetLoops(sch.GetBlock("S"));
  ExpectScheduleError(sch, "NotOnlyBlockInLoopNestError",
                      "block 'S' shares its outermost loop 'i' with block 'T'",
                      [&] { sch.RFactor(loops[1], /*factor_axis=*/0); });
  ExpectScheduleError(sch, "NotSingleChildBlockError", "loop 'i', which has 2 blocks under it",
                      [&] { sch.RFactor(loops[0], /*factor_axis=*/0); });
}

TEST(RFactor, RejectsAFactorAxisOutOfRange) {
  Schedule sch(ParseFunc(kSplitGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ExpectScheduleError(sch, "FactorAxisOutOfRangeError", "factor_axis 3: buffer 'C' has 2",
                      [&] { sch.RFactor(loops[3], /*factor_axis=*/3); });
  ExpectScheduleError(sch, "FactorAxisOutOfRangeError", "factor_axis -4",
                      [&] { sch.RFactor(loops[3], /*factor_axis=*/-4); });
}

TEST(RFactor, RejectsAPredicateOnTheReductionLoops) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto parts = sch.Split(loops[2], {std::monostate{}, int64_t{3}});
  ExpectScheduleError(sch, "ReductionPredicateError",
                      "the predicate of block 'C' uses a reduction loop",
                      [&] { sch.RFactor(parts[1], /*factor_axis=*/0); });
}

}  // namespace
}  // namespace tirtune
