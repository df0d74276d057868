// cache_write: the block writes the cache and a stage copies it back; reductions accumulate in
// the cache; the errors.
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

TEST(CacheWrite, IntermediateIsCopiedBackRightAfterTheBlock) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  BlockRV copy = sch.CacheWrite(sch.GetBlock("B"), /*write_index=*/0, StorageScope::kLocal);
  EXPECT_EQ(sch.BlockName(copy), "B_local");
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
                    writes(B_local[vi, vj])
                    B_local[vi, vj] = A[vi, vj] * 2.0
        for ax0 in range(16):
            for ax1 in range(8):
                with block("B_local"):
                    v0 = axis.spatial(16, ax0)
                    v1 = axis.spatial(8, ax1)
                    reads(B_local[v0, v1])
                    writes(B[v0, v1])
                    B[v0, v1] = B_local[v0, v1]
        for i in range(16):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(8, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheWrite, ReductionAccumulatesInTheCache) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  sch.CacheWrite(sch.GetBlock("C"), /*write_index=*/0, StorageScope::kLocal);
  ExpectFuncEqual(sch.func(), R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        C_local = alloc_buffer((16, 12), float32, scope="local")
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C_local[vi, vj])
                        with init():
                            C_local[vi, vj] = 0.0
                        C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(16):
            for ax1 in range(12):
                with block("C_local"):
                    v0 = axis.spatial(16, ax0)
                    v1 = axis.spatial(12, ax1)
                    reads(C_local[v0, v1])
                    writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
)");
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheWrite, WithCacheReadsGivesTheFullStagedGemm) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  sch.CacheRead(c, /*read_index=*/0, StorageScope::kShared);
  sch.CacheRead(c, /*read_index=*/1, StorageScope::kShared);
  sch.CacheWrite(c, /*write_index=*/0, StorageScope::kLocal);
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) names.push_back(b->block->name);
  EXPECT_EQ(names, (std::vector<std::string>{"root", "A_shared", "B_shared", "C", "C_local"}));
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheWrite, ThenSplitAndReorderTheCopy) {
  PrimFunc f = ParseFunc(kTwoStages);
  Schedule sch(f);
  BlockRV copy = sch.CacheWrite(sch.GetBlock("B"), /*write_index=*/0, StorageScope::kShared);
  auto loops = sch.GetLoops(copy);
  ASSERT_EQ(loops.size(), 2u);
  auto parts = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  sch.Reorder({loops[1], parts[1]});
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheWrite, RejectsAnInPlaceUpdate) {
  const char* text = R"(@prim_func
def in_place(A: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            with block("A"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(A[vi])
                A[vi] = A[vi] + 1.0
)";
  Schedule sch(ParseFunc(text));
  BlockRV a = sch.GetBlock("A");
  ExpectScheduleError(sch, "CacheWriteOfInPlaceUpdateError",
                      "block 'A' also reads it and is not a reduction",
                      [&] { sch.CacheWrite(a, /*write_index=*/0, StorageScope::kLocal); });
}

TEST(CacheWrite, RejectsABufferWithTwoProducers) {
  const char* text = R"(@prim_func
def two_writers(A: Buffer((16,), float32), B: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
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
)";
  Schedule sch(ParseFunc(text));
  BlockRV b1 = sch.GetBlock("B1");
  ExpectScheduleError(sch, "NotSingleWriteBlockError",
                      "cache_write of buffer 'B', which 2 blocks of the scope write",
                      [&] { sch.CacheWrite(b1, /*write_index=*/0, StorageScope::kLocal); });
}

TEST(CacheWrite, RejectsAConsumerInTheSameLoopNest) {
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
  BlockRV b = sch.GetBlock("B");
  ExpectScheduleError(sch, "CacheLocationError", "block 'C' accesses the buffer in the same loop",
                      [&] { sch.CacheWrite(b, /*write_index=*/0, StorageScope::kLocal); });
  // The consumer's own output has no other user in the nest.
  sch.CacheWrite(sch.GetBlock("C"), /*write_index=*/0, StorageScope::kLocal);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(CacheWrite, RejectsAWriteIndexOutOfRange) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV c = sch.GetBlock("C");
  ExpectScheduleError(sch, "BufferIndexOutOfRangeError",
                      "write buffer 1 of block 'C', which has 1 write buffer(s)",
                      [&] { sch.CacheWrite(c, /*write_index=*/1, StorageScope::kLocal); });
}

}  // namespace
}  // namespace tirtune
