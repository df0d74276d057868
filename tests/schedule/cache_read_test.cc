// cache_read: the copy stage for an input and for a produced buffer, which readers switch, block
// naming, and the errors.
#include "gemm_text.h"
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

// Two blocks read A; D also reads C.
const char* kTwoReaders = R"(@prim_func
def two_readers(A: Buffer((16,), float32), C: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = A[vi] * 2.0
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(C[vi], A[vi])
                writes(D[vi])
                D[vi] = C[vi] + A[vi]
)";

TEST(CacheRead, InputBufferIsCopiedBeforeItsFirstReader) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV copy = sch.CacheRead(sch.GetBlock("C"), /*read_index=*/0, StorageScope::kShared);
  EXPECT_EQ(sch.BlockName(copy), "A_shared");
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        A_shared = alloc_buffer((16, 8), float32, scope="shared")
        for ax0 in range(16):
            for ax1 in range(8):
                with block("A_shared"):
                    v0 = axis.spatial(16, ax0)
                    v1 = axis.spatial(8, ax1)
                    reads(A[v0, v1])
                    writes(A_shared[v0, v1])
                    A_shared[v0, v1] = A[v0, v1]
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A_shared[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheRead, ProducedBufferIsCopiedRightAfterItsProducer) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  sch.CacheRead(sch.GetBlock("C"), /*read_index=*/0, StorageScope::kLocal);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def two_stages(A: Buffer((16, 8), float32), C: Buffer((16, 8), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16, 8), float32)
        B_local = alloc_buffer((16, 8), float32, scope="local")
        for i in range(16):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
        for ax0 in range(16):
            for ax1 in range(8):
                with block("B_local"):
                    v0 = axis.spatial(16, ax0)
                    v1 = axis.spatial(8, ax1)
                    reads(B[v0, v1])
                    writes(B_local[v0, v1])
                    B_local[v0, v1] = B[v0, v1]
        for i in range(16):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(B_local[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B_local[vi, vj] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheRead, OnlyTheGivenBlockReadsTheCache) {
  PrimFunc f = ParseFunc(kTwoReaders);
  Schedule sch(f);
  sch.CacheRead(sch.GetBlock("D"), /*read_index=*/1, StorageScope::kGlobal);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def two_readers(A: Buffer((16,), float32), C: Buffer((16,), float32), D: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        A_global = alloc_buffer((16,), float32)
        for ax0 in range(16):
            with block("A_global"):
                v0 = axis.spatial(16, ax0)
                reads(A[v0])
                writes(A_global[v0])
                A_global[v0] = A[v0]
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = A[vi] * 2.0
        for i in range(16):
            with block("D"):
                vi = axis.spatial(16, i)
                reads(C[vi], A_global[vi])
                writes(D[vi])
                D[vi] = C[vi] + A_global[vi]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheRead, SecondCopyOfTheSameBufferGetsAFreshBlockName) {
  PrimFunc f = ParseFunc(kTwoReaders);
  Schedule sch(f);
  BlockRV first = sch.CacheRead(sch.GetBlock("C"), /*read_index=*/0, StorageScope::kShared);
  BlockRV second = sch.CacheRead(sch.GetBlock("D"), /*read_index=*/1, StorageScope::kShared);
  EXPECT_EQ(sch.BlockName(first), "A_shared");
  EXPECT_EQ(sch.BlockName(second), "A_shared_1");
  EXPECT_FALSE(sch.Get(sch.GetBlock("C"))
                   ->block->reads[0]
                   .buffer.same_as(sch.Get(sch.GetBlock("D"))->block->reads[1].buffer));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheRead, CacheOfTheCacheChainsTwoStages) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  sch.CacheRead(c, /*read_index=*/1, StorageScope::kShared);
  sch.CacheRead(c, /*read_index=*/1, StorageScope::kLocal);
  const BlockNode* block = sch.Get(c)->block.get();
  EXPECT_EQ(block->reads[1].buffer->name, "B_shared_local");
  EXPECT_EQ(block->reads[1].buffer->scope, StorageScope::kLocal);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheRead, CacheIsAllocatedInTheScopeBlockOfTheReader) {
  const char* text = R"(@prim_func
def nested(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        with block("outer"):
            reads(A[0:16])
            writes(C[0:16])
            for i in range(16):
                with block("C"):
                    vi = axis.spatial(16, i)
                    reads(A[vi])
                    writes(C[vi])
                    C[vi] = A[vi] + 1.0
)";
  PrimFunc f = ParseFunc(text);
  Schedule sch(f);
  sch.CacheRead(sch.GetBlock("C"), /*read_index=*/0, StorageScope::kLocal);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def nested(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        with block("outer"):
            reads(A[0:16])
            writes(C[0:16])
            A_local = alloc_buffer((16,), float32, scope="local")
            for ax0 in range(16):
                with block("A_local"):
                    v0 = axis.spatial(16, ax0)
                    reads(A[v0])
                    writes(A_local[v0])
                    A_local[v0] = A[v0]
            for i in range(16):
                with block("C"):
                    vi = axis.spatial(16, i)
                    reads(A_local[vi])
                    writes(C[vi])
                    C[vi] = A_local[vi] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheRead, RejectsAReadIndexOutOfRange) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "BufferIndexOutOfRangeError",
                      "read buffer 2 of block 'C', which has 2 read buffer(s)",
                      [&] { sch.CacheRead(c, /*read_index=*/2, StorageScope::kShared); });
}

TEST(CacheRead, RejectsABufferTheBlockAlsoWrites) {
  const char* text = R"(@prim_func
def row_sum(A: Buffer((4, 8), float32), S: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for k in range(8):
                with block("S"):
                    vi = axis.spatial(4, i)
                    vk = axis.reduce(8, k)
                    reads(S[vi], A[vi, vk])
                    writes(S[vi])
                    with init():
                        S[vi] = 0.0
                    S[vi] = S[vi] + A[vi, vk]
)";
  Schedule sch(ParseFunc(text));
  BlockRV s = sch.GetBlock("S");
  ExpectScheduleError(sch, "CacheReadOfWrittenBufferError", "buffer 'S': block 'S' also writes it",
                      [&] { sch.CacheRead(s, /*read_index=*/0, StorageScope::kLocal); });
  // Its other input is fine.
  sch.CacheRead(s, /*read_index=*/1, StorageScope::kLocal);
}

TEST(CacheRead, RejectsABufferWithTwoProducers) {
  const char* text = R"(@prim_func
def two_writers(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((16,), float32)
        for i in range(8):
            with block("B0"):
                vi = axis.spatial(8, i)
                reads(A[vi])
                writes(B[vi])
                B[vi] = A[vi]
        for i in range(8):
            with block("B1"):
                vi = axis.spatial(8, i)
                reads(A[vi + 8])
                writes(B[vi + 8])
                B[vi + 8] = A[vi + 8] * 2.0
        for i in range(16):
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] + 1.0
)";
  Schedule sch(ParseFunc(text));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "NotSingleWriteBlockError",
                      "buffer 'B', which 2 blocks of the scope write ('B0', 'B1')",
                      [&] { sch.CacheRead(c, /*read_index=*/0, StorageScope::kShared); });
}

TEST(CacheRead, RejectsAProducerInTheSameLoopNest) {
  const char* text = R"(@prim_func
def fused(A: Buffer((16,), float32), C: Buffer((16,), float32)):
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
            with block("C"):
                vi = axis.spatial(16, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] + 1.0
)";
  PrimFunc f = ParseFunc(text);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "CacheLocationError", "block 'B' accesses the buffer in the same loop",
                      [&] { sch.CacheRead(c, /*read_index=*/0, StorageScope::kLocal); });
  // An input read in the shared nest is still fine: its copy goes before the nest.
  sch.CacheRead(sch.GetBlock("B"), /*read_index=*/0, StorageScope::kShared);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

}  // namespace
}  // namespace tirtune
