// reverse_compute_inline: an elementwise consumer folds into its single producer, which then
// writes the consumer's output; each precondition has its error.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kScaleThenBiasRelu = R"(@prim_func
def scale_bias_relu(A: Buffer((16,), float32), E: Buffer((16,), float32), D: Buffer((16,), float32)):
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
        for i in range(16):
            with block("D"):
                vj = axis.spatial(16, i)
                reads(B[vj], E[vj])
                writes(D[vj])
                D[vj] = max(B[vj] + E[vj], 0.0)
)";

TEST(ReverseComputeInline, ConsumerFoldsIntoProducer) {
  PrimFunc f = ParseFunc(kScaleThenBiasRelu);
  Schedule sch(f);
  sch.ReverseComputeInline(sch.GetBlock("D"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def scale_bias_relu(A: Buffer((16,), float32), E: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi], E[vi])
                writes(D[vi])
                D[vi] = max(A[vi] * 2.0 + E[vi], 0.0)
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// The consumer runs its loops the other way round and names its iterators differently; they are
// matched through the indices of B.
TEST(ReverseComputeInline, ConsumerIteratorsAreMappedThroughTheLoad) {
  PrimFunc f = ParseFunc(R"(@prim_func
def transpose_out(A: Buffer((16, 8), float32), D: Buffer((8, 16), float32)):
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
                    B[vi, vj] = A[vi, vj] + 1.0
        for j in range(8):
            for i in range(16):
                with block("D"):
                    x = axis.spatial(8, j)
                    y = axis.spatial(16, i)
                    reads(B[y, x])
                    writes(D[x, y])
                    D[x, y] = B[y, x] * B[y, x]
)");
  Schedule sch(f);
  sch.ReverseComputeInline(sch.GetBlock("D"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def transpose_out(A: Buffer((16, 8), float32), D: Buffer((8, 16), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(D[vj, vi])
                    D[vj, vi] = (A[vi, vj] + 1.0) * (A[vi, vj] + 1.0)
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// A reshape writes each output element once (a bijective affine map of the iterators).
TEST(ReverseComputeInline, InjectiveReshapeStore) {
  PrimFunc f = ParseFunc(R"(@prim_func
def flatten(A: Buffer((4, 8), float32), D: Buffer((32,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((4, 8), float32)
        for i in range(4):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = exp(A[vi, vj])
        for i in range(4):
            for j in range(8):
                with block("D"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(B[vi, vj])
                    writes(D[vi * 8 + vj])
                    D[vi * 8 + vj] = B[vi, vj]
)");
  Schedule sch(f);
  sch.ReverseComputeInline(sch.GetBlock("D"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def flatten(A: Buffer((4, 8), float32), D: Buffer((32,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(D[vi * 8 + vj])
                    D[vi * 8 + vj] = exp(A[vi, vj])
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

// The CUDA-style epilogue: a reduction into a local buffer, a write-back stage, and an
// elementwise epilogue folded into the write-back stage.
TEST(ReverseComputeInline, IntoTheWriteBackStageOfAReduction) {
  PrimFunc f = ParseFunc(R"(@prim_func
def gemm_relu(A: Buffer((8, 4), float32), W: Buffer((4, 6), float32), D: Buffer((8, 6), float32)):
    with block("root"):
        reads()
        writes()
        acc = alloc_buffer((8, 6), float32, scope="local")
        C = alloc_buffer((8, 6), float32)
        for i in range(8):
            for j in range(6):
                for k in range(4):
                    with block("acc"):
                        vi = axis.spatial(8, i)
                        vj = axis.spatial(6, j)
                        vk = axis.reduce(4, k)
                        reads(A[vi, vk], W[vk, vj])
                        writes(acc[vi, vj])
                        with init():
                            acc[vi, vj] = 0.0
                        acc[vi, vj] = acc[vi, vj] + A[vi, vk] * W[vk, vj]
        for i in range(8):
            for j in range(6):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(6, j)
                    reads(acc[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = acc[vi, vj]
        for i in range(8):
            for j in range(6):
                with block("relu"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(6, j)
                    reads(C[vi, vj])
                    writes(D[vi, vj])
                    D[vi, vj] = max(C[vi, vj], 0.0)
)");
  Schedule sch(f);
  sch.ReverseComputeInline(sch.GetBlock("relu"));
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm_relu(A: Buffer((8, 4), float32), W: Buffer((4, 6), float32), D: Buffer((8, 6), float32)):
    with block("root"):
        reads()
        writes()
        acc = alloc_buffer((8, 6), float32, scope="local")
        for i in range(8):
            for j in range(6):
                for k in range(4):
                    with block("acc"):
                        vi = axis.spatial(8, i)
                        vj = axis.spatial(6, j)
                        vk = axis.reduce(4, k)
                        reads(A[vi, vk], W[vk, vj])
                        writes(acc[vi, vj])
                        with init():
                            acc[vi, vj] = 0.0
                        acc[vi, vj] = acc[vi, vj] + A[vi, vk] * W[vk, vj]
        for i in range(8):
            for j in range(6):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(6, j)
                    reads(acc[vi, vj])
                    writes(D[vi, vj])
                    D[vi, vj] = max(acc[vi, vj], 0.0)
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(ReverseComputeInline, RejectsReductionProducer) {
  Schedule sch(ParseFunc(R"(@prim_func
def gemm_relu(A: Buffer((8, 4), float32), W: Buffer((4, 6), float32), D: Buffer((8, 6), float32)):
    with block("root"):
        reads()
        writes()
        C = alloc_buffer((8, 6), float32)
        for i in range(8):
            for j in range(6):
                for k in range(4):
                    with block("C"):
                        vi = axis.spatial(8, i)
                        vj = axis.spatial(6, j)
                        vk = axis.reduce(4, k)
                        reads(A[vi, vk], W[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]
        for i in range(8):
            for j in range(6):
                with block("relu"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(6, j)
                    reads(C[vi, vj])
                    writes(D[vi, vj])
                    D[vi, vj] = max(C[vi, vj], 0.0)
)"));
  BlockRV relu = sch.GetBlock("relu");
  ExpectScheduleError(sch, "NotSpatialBlockError", "block 'C' is a reduction",
                      [&] { sch.ReverseComputeInline(relu); });
}

TEST(ReverseComputeInline, RejectsConsumerOfTwoProducedBuffers) {
  Schedule sch(ParseFunc(R"(@prim_func
def join(A: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        C = alloc_buffer((16,), float32)
        for i in range(16):
            with block("B"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi] + 1.0
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = A[vi] * 3.0
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[vi], C[vi])
                writes(D[vi])
                D[vi] = B[vi] + C[vi]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "NotSingleProducedReadError", "it reads 'B', 'C'",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsBroadcastConsumer) {
  Schedule sch(ParseFunc(R"(@prim_func
def broadcast(A: Buffer((16,), float32), D: Buffer((16, 4), float32)):
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
        for i in range(16):
            for j in range(4):
                with block("D"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(4, j)
                    reads(B[vi])
                    writes(D[vi, vj])
                    D[vi, vj] = B[vi]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "LoadIndicesError", "iterator 'vj' does not index it",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsLoadsAtDifferentIndices) {
  Schedule sch(ParseFunc(R"(@prim_func
def shifted(A: Buffer((16,), float32), D: Buffer((15,), float32)):
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
        for i in range(15):
            with block("D"):
                vi = axis.spatial(15, i)
                reads(B[vi:vi + 2])
                writes(D[vi])
                D[vi] = B[vi] + B[vi + 1]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "LoadIndicesError", "have different domains",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsTwoDifferentLoadsOverTheSameDomain) {
  Schedule sch(ParseFunc(R"(@prim_func
def mirrored(A: Buffer((16,), float32), D: Buffer((16,), float32)):
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
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[0:16])
                writes(D[vi])
                D[vi] = B[vi] - B[15 - vi]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "LoadIndicesError", "two loads use different indices",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsNonInjectiveStore) {
  Schedule sch(ParseFunc(R"(@prim_func
def pairs(A: Buffer((16,), float32), D: Buffer((8,), float32)):
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
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(D[vi // 2])
                D[vi // 2] = B[vi]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "NotInjectiveStoreError", "to write each element of 'D' once",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsBufferWithAnotherReader) {
  Schedule sch(ParseFunc(R"(@prim_func
def shared_b(A: Buffer((16,), float32), D: Buffer((16,), float32), E: Buffer((16,), float32)):
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
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(D[vi])
                D[vi] = B[vi] * 2.0
        for i in range(16):
            with block("E"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(E[vi])
                E[vi] = B[vi] - 1.0
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "OtherReadersError", "block 'E' reads it besides block 'D'",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsConsumerReadingItsOutput) {
  Schedule sch(ParseFunc(R"(@prim_func
def accumulate(A: Buffer((16,), float32), D: Buffer((16,), float32)):
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
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[vi], D[vi])
                writes(D[vi])
                D[vi] = D[vi] + B[vi]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "ConflictingAccessError", "it reads 'D', the buffer it writes",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsBlockBetweenThatReadsTheOutput) {
  Schedule sch(ParseFunc(R"(@prim_func
def reads_d(A: Buffer((16,), float32), D: Buffer((16,), float32), E: Buffer((16,), float32)):
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
        for i in range(16):
            with block("E"):
                vi = axis.spatial(16, i)
                reads(D[vi])
                writes(E[vi])
                E[vi] = D[vi]
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(D[vi])
                D[vi] = B[vi] * 2.0
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "ConflictingAccessError", "block 'E' in between accesses its buffers",
                      [&] { sch.ReverseComputeInline(d); });
}

TEST(ReverseComputeInline, RejectsReductionConsumer) {
  Schedule sch(ParseFunc(R"(@prim_func
def row_sum(A: Buffer((16, 8), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16, 8), float32)
        for i in range(16):
            for k in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vk = axis.spatial(8, k)
                    reads(A[vi, vk])
                    writes(B[vi, vk])
                    B[vi, vk] = A[vi, vk] * 2.0
        for i in range(16):
            for k in range(8):
                with block("D"):
                    vi = axis.spatial(16, i)
                    vk = axis.reduce(8, k)
                    reads(B[vi, vk])
                    writes(D[vi])
                    with init():
                        D[vi] = 0.0
                    D[vi] = D[vi] + B[vi, vk]
)"));
  BlockRV d = sch.GetBlock("D");
  ExpectScheduleError(sch, "NotSpatialBlockError", "block 'D' is a reduction",
                      [&] { sch.ReverseComputeInline(d); });
}

}  // namespace
}  // namespace tirtune
