// compute_inline: the producer's value replaces every load of its buffer, read regions follow,
// the block and its buffer disappear, and each precondition has its error.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kTwoStages = R"(@prim_func
def two_stages(A: Buffer((16, 8), float32), C: Buffer((16, 8), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16, 8), float32)
        for i in range(16):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
        for i in range(16):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
)";

TEST(ComputeInline, ElementwiseProducerDisappearsIntoConsumer) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def two_stages(A: Buffer((16, 8), float32), C: Buffer((16, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = A[vi, vj] * 2.0 + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// The consumer reads B transposed and twice; each load gets the value at its own indices, and
// A's region covers both loads.
TEST(ComputeInline, EachLoadGetsTheValueAtItsIndices) {
  PrimFunc f = ParseFunc(R"(@prim_func
def stencil(A: Buffer((8, 9), float32), C: Buffer((8, 8), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((9, 8), float32)
        for i in range(9):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(9, i)
                    vj = axis.spatial(8, j)
                    reads(A[vj, vi])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vj, vi] + 1.0
        for i in range(8):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(8, j)
                    reads(B[vj:vj + 2, vi])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vj, vi] * B[vj + 1, vi]
)");
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def stencil(A: Buffer((8, 9), float32), C: Buffer((8, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj:vj + 2])
                    writes(C[vi, vj])
                    C[vi, vj] = (A[vi, vj] + 1.0) * (A[vi, vj + 1] + 1.0)
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// A reduction consumer: the load inside the update is replaced; the consumer keeps its other
// reads and its init.
TEST(ComputeInline, IntoReductionConsumer) {
  PrimFunc f = ParseFunc(R"(@prim_func
def scaled_gemm(A: Buffer((16, 8), float32), W: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        A2 = alloc_buffer((16, 8), float32)
        for i in range(16):
            for k in range(8):
                with block("A2"):
                    vi = axis.spatial(16, i)
                    vk = axis.spatial(8, k)
                    reads(A[vi, vk])
                    writes(A2[vi, vk])
                    A2[vi, vk] = A[vi, vk] * 0.5
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A2[vi, vk], W[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A2[vi, vk] * W[vk, vj]
)");
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("A2"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def scaled_gemm(A: Buffer((16, 8), float32), W: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], W[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * 0.5 * W[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// Two consumers, one of which already reads A: A's region there is kept, not duplicated.
TEST(ComputeInline, EveryConsumerIsRewritten) {
  PrimFunc f = ParseFunc(R"(@prim_func
def fan_out(A: Buffer((16,), float32), C: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = exp(A[vi])
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] + 1.0
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(A[vi], B[vi])
                writes(D[vi])
                D[vi] = A[vi] - B[vi]
)");
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def fan_out(A: Buffer((16,), float32), C: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = exp(A[vi]) + 1.0
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(D[vi])
                D[vi] = A[vi] - exp(A[vi])
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// Loops shared with a sibling stay; only the block's own statement goes.
TEST(ComputeInline, KeepsLoopsThatHoldOtherStatements) {
  PrimFunc f = ParseFunc(R"(@prim_func
def fused_loop(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] + 1.0
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] * B[vi]
)");
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("B"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def fused_loop(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = (A[vi] + 1.0) * (A[vi] + 1.0)
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ComputeInline, TheInlinedBlockIsGone) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV b = sch.GetBlock("B");
  sch.ComputeInline(b);
  ExpectScheduleError(sch, "BlockNotFoundError", "'B' no longer exists",
                      [&] { sch.ComputeInline(b); });
}

TEST(ComputeInline, RejectsReductionBlock) {
  PrimFunc f = ParseFunc(R"(@prim_func
def sum_then_scale(A: Buffer((16, 8), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
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
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] * 2.0
)");
  Schedule sch(f);
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "NotSpatialBlockError", "block 'B' is a reduction",
                      [&] { sch.ComputeInline(block); });
}

TEST(ComputeInline, RejectsOutputBlock) {
  Schedule sch(ParseFunc(kTwoStages));
  BlockRV block = sch.GetBlock("C");
  ExpectScheduleError(sch, "NotIntermediateError",
                      "'C' written by block 'C', but it is a parameter",
                      [&] { sch.ComputeInline(block); });
}

TEST(ComputeInline, RejectsStoreAtNonIteratorIndex) {
  Schedule sch(ParseFunc(R"(@prim_func
def shifted(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((17,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi + 1])
                B[vi + 1] = A[vi]
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi + 1])
                writes(C[vi])
                C[vi] = B[vi + 1]
)"));
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "StoreIndicesError", "index 0 of its store into 'B' is not a block",
                      [&] { sch.ComputeInline(block); });
}

TEST(ComputeInline, RejectsValueUsingAnIteratorThatIsNotAnIndex) {
  Schedule sch(ParseFunc(R"(@prim_func
def last_wins(A: Buffer((16, 4), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            for j in range(4):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(4, j)
                    reads(A[vi, vj])
                    writes(B[vi])
                    B[vi] = A[vi, vj]
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi]
)"));
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "ValueUsesOtherIterError", "uses iterator 'vj'",
                      [&] { sch.ComputeInline(block); });
}

// Loads of B[8:16] would read zeros before inlining and A after it.
TEST(ComputeInline, RejectsProducerThatWritesPartOfTheBuffer) {
  Schedule sch(ParseFunc(R"(@prim_func
def half(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(8):
            with block("B"):
                vi = axis.spatial(8, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] + 1.0
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi]
)"));
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "PartialWriteError", "iterator 'vi' does not cover its dimension",
                      [&] { sch.ComputeInline(block); });
}

TEST(ComputeInline, RejectsBufferWithTwoWriters) {
  Schedule sch(ParseFunc(R"(@prim_func
def overwritten(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] + 1.0
        for i in range(8):
            with block("B2"):
                vi = axis.spatial(8, i)
                reads()
                writes(B[vi])
                B[vi] = 0.0
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi]
)"));
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "MultipleWritersError", "block 'B2' also writes 'B'",
                      [&] { sch.ComputeInline(block); });
}

TEST(ComputeInline, RejectsBodyThatIsNotASingleStore) {
  Schedule sch(ParseFunc(R"(@prim_func
def two_stores(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                if vi < 8:
                    B[vi] = A[vi]
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi]
)"));
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "NotSingleStoreError", "body of block 'B' to be a single buffer store",
                      [&] { sch.ComputeInline(block); });
}

TEST(ComputeInline, RejectsRemovingTheOnlyStatementOfAScope) {
  Schedule sch(ParseFunc(R"(@prim_func
def lonely(A: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi]
)"));
  BlockRV block = sch.GetBlock("B");
  ExpectScheduleError(sch, "OnlyLeafInScopeError", "the only statement left in block 'root'",
                      [&] { sch.ComputeInline(block); });
}

// A gather (an embedding lookup): the index is a loaded value, so the consumer reads the whole
// table axis; a region whose bounds load `ids` would not be well formed.
TEST(ComputeInline, AGatherProducerMakesTheConsumerReadTheWholeIndexedAxis) {
  PrimFunc f = ParseFunc(R"(@prim_func
def gather(W: Buffer((10, 4), float32), ids: Buffer((3,), int64), P: Buffer((3, 4), float32), C: Buffer((3, 4), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((3, 4), float32)
        for i in range(3):
            for j in range(4):
                with block("T"):
                    vi = axis.spatial(3, i)
                    vj = axis.spatial(4, j)
                    reads(ids[vi], W[0:10, vj])
                    writes(T[vi, vj])
                    T[vi, vj] = select(min(max(ids[vi], 0), 9) >= 0, W[min(max(ids[vi], 0), 9), vj], W[0, vj])
        for i in range(3):
            for j in range(4):
                with block("C"):
                    vi = axis.spatial(3, i)
                    vj = axis.spatial(4, j)
                    reads(T[vi, vj], P[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = T[vi, vj] + P[vi, vj]
)");
  Schedule sch(f);
  sch.ComputeInline(sch.GetBlock("T"));
  std::string text = Print(sch.func());
  EXPECT_NE(text.find("W[0:10, vj]"), std::string::npos) << text;
  EXPECT_EQ(text.find("W[0:min"), std::string::npos) << text;
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

}  // namespace
}  // namespace tirtune
