// CompactBufferAllocations: allocations move to the lowest common ancestor of their uses, as far
// as that keeps every value inside one iteration, and shrink to the region used there.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(CompactBufferAllocations, TileStageShrinksToTheTileInsideTheTileLoops) {
  PrimFunc f = ParseFunc(R"(@prim_func
def tiles(A: Buffer((16, 12), float32), C: Buffer((16, 12), float32)):
    with allocate(T, (16, 12), float32, scope="local"):
        for i0 in range(4):
            for j0 in range(3):
                for i1 in range(4):
                    for j1 in range(4):
                        T[i0 * 4 + i1, j0 * 4 + j1] = A[i0 * 4 + i1, j0 * 4 + j1] * 2.0
                for i1 in range(4):
                    for j1 in range(4):
                        C[i0 * 4 + i1, j0 * 4 + j1] = T[i0 * 4 + i1, j0 * 4 + j1] + 1.0
)");
  PrimFunc compacted = CompactBufferAllocations(f);
  ExpectFuncEqual(compacted, R"(@prim_func
def tiles(A: Buffer((16, 12), float32), C: Buffer((16, 12), float32)):
    for i0 in range(4):
        for j0 in range(3):
            with allocate(T, (4, 4), float32, scope="local"):
                for i1 in range(4):
                    for j1 in range(4):
                        T[i1, j1] = A[i0 * 4 + i1, j0 * 4 + j1] * 2.0
                for i1 in range(4):
                    for j1 in range(4):
                        C[i0 * 4 + i1, j0 * 4 + j1] = T[i1, j1] + 1.0
)");
  ExpectSameNumbers(f, compacted);
}

TEST(CompactBufferAllocations, AccumulatorMovesIntoTheLoopThatIndexesItButNotIntoTheReduction) {
  PrimFunc f = ParseFunc(R"(@prim_func
def acc(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    with allocate(S, (4,), float32, scope="local"):
        for i in range(4):
            for k in range(8):
                if k == 0:
                    S[i] = 0.0
                S[i] = S[i] + A[i, k]
            C[i] = S[i]
)");
  PrimFunc compacted = CompactBufferAllocations(f);
  ExpectFuncEqual(compacted, R"(@prim_func
def acc(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    for i in range(4):
        with allocate(S, (1,), float32, scope="local"):
            for k in range(8):
                if k == 0:
                    S[0] = 0.0
                S[0] = S[0] + A[i, k]
            C[i] = S[0]
)");
  ExpectSameNumbers(f, compacted);
}

TEST(CompactBufferAllocations, ElementSharedByAllIterationsOfASerialLoopStaysAboveIt) {
  // Nothing proves that iteration i does not read what iteration i - 1 wrote.
  const char* text = R"(@prim_func
def carried(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    with allocate(S, (1,), float32, scope="local"):
        for i in range(4):
            for k in range(8):
                if i == 0 and k == 0:
                    S[0] = 0.0
                S[0] = S[0] + A[i, k]
            C[i] = S[0]
)";
  PrimFunc f = ParseFunc(text);
  PrimFunc compacted = CompactBufferAllocations(f);
  ExpectFuncEqual(compacted, text);
  ExpectSameNumbers(f, compacted);
}

TEST(CompactBufferAllocations, ParallelLoopGetsAPrivateCopyOfASharedElement) {
  PrimFunc f = ParseFunc(R"(@prim_func
def par(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    with allocate(S, (1,), float32, scope="local"):
        for i in parallel(4):
            for k in range(8):
                if k == 0:
                    S[0] = 0.0
                S[0] = S[0] + A[i, k]
            C[i] = S[0]
)");
  PrimFunc compacted = CompactBufferAllocations(f);
  ExpectFuncEqual(compacted, R"(@prim_func
def par(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    for i in parallel(4):
        with allocate(S, (1,), float32, scope="local"):
            for k in range(8):
                if k == 0:
                    S[0] = 0.0
                S[0] = S[0] + A[i, k]
            C[i] = S[0]
)");
  ExpectSameNumbers(f, compacted);
}

TEST(CompactBufferAllocations, SiblingUsesKeepTheAllocationAboveThemAndUnrolledLoopsStayWhole) {
  PrimFunc f = ParseFunc(R"(@prim_func
def two(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with allocate(T, (8,), float32):
        with allocate(U, (8,), float32):
            for i in range(8):
                T[i] = A[i]
            for i in range(8):
                C[i] = T[i]
            for i in unroll(8):
                U[i] = A[i]
                C[i] = C[i] + U[i]
)");
  PrimFunc compacted = CompactBufferAllocations(f);
  ExpectFuncEqual(compacted, R"(@prim_func
def two(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with allocate(T, (8,), float32):
        for i in range(8):
            T[i] = A[i]
        for i in range(8):
            C[i] = T[i]
        with allocate(U, (8,), float32):
            for i in unroll(8):
                U[i] = A[i]
                C[i] = C[i] + U[i]
)");
  ExpectSameNumbers(f, compacted);
}

TEST(CompactBufferAllocations, UnusedAllocationDisappears) {
  PrimFunc f = ParseFunc(R"(@prim_func
def unused(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with allocate(T, (8,), float32):
        for i in range(8):
            C[i] = A[i]
)");
  ExpectFuncEqual(CompactBufferAllocations(f), R"(@prim_func
def unused(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    for i in range(8):
        C[i] = A[i]
)");
}

TEST(CompactBufferAllocations, RegionAsLargeAsTheBufferKeepsShapeAndIndices) {
  const char* text = R"(@prim_func
def whole(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with allocate(T, (8,), float32):
        for i in range(8):
            T[7 - i] = A[i]
        for i in range(8):
            C[i] = T[i]
)";
  ExpectFuncEqual(CompactBufferAllocations(ParseFunc(text)), text);
}

TEST(CompactBufferAllocations, StorageAlignPadsTheStridesOfTheCompactedShape) {
  PrimFunc f = ParseFunc(R"(@prim_func
def aligned(A: Buffer((8, 4), float32), C: Buffer((8, 4), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((8, 4), float32)
        for i in range(8):
            for j in range(4):
                with block("T"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(4, j)
                    reads(A[vi, vj])
                    writes(T[vi, vj])
                    block_attr({"buffer_dim_align": "[[0, 0, 8, 1]]"})
                    T[vi, vj] = A[vi, vj]
            for j in range(4):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(4, j)
                    reads(T[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = T[vi, vj]
)");
  PrimFunc loops = ConvertBlocksToLoops(f);
  PrimFunc compacted = CompactBufferAllocations(loops, CollectStorageAlign(f));
  const auto* outer = compacted->body.as<ForNode>();
  ASSERT_NE(outer, nullptr) << Print(compacted);
  const auto* alloc = outer->body.as<AllocateNode>();
  ASSERT_NE(alloc, nullptr) << Print(compacted);
  EXPECT_EQ(alloc->buffer->ndim(), 2);
  EXPECT_TRUE(IsConstInt(alloc->buffer->shape[0], 1));
  EXPECT_TRUE(IsConstInt(alloc->buffer->shape[1], 4));
  ASSERT_EQ(alloc->buffer->strides.size(), 2u);
  EXPECT_TRUE(IsConstInt(alloc->buffer->strides[0], 9));  // 4 padded to 9 % 8 == 1
  EXPECT_TRUE(IsConstInt(alloc->buffer->strides[1], 1));
  ExpectSameNumbers(f, compacted);
}

// A GPU accumulator used by two sibling threadIdx loops (the update inside a K loop, the
// write-back after it) stays above them, and every thread's copy holds only that thread's
// elements, the loops' thread indices standing for the same thread.
TEST(CompactBufferAllocations, GpuLocalAboveThreadLoopsKeepsOneThreadsTile) {
  PrimFunc f = ParseFunc(R"(@prim_func
def acc(A: Buffer((8, 8), float32), C: Buffer((8, 8), float32)):
    with allocate(S, (8, 8), float32, scope="local"):
        for k in range(8):
            for ty in thread_binding(4, thread="threadIdx.y"):
                for i in range(2):
                    if k == 0:
                        S[ty * 2 + i, 0] = 0.0
                    S[ty * 2 + i, 0] = S[ty * 2 + i, 0] + A[ty * 2 + i, k]
        for ty2 in thread_binding(4, thread="threadIdx.y"):
            for i in range(2):
                C[ty2 * 2 + i, 0] = S[ty2 * 2 + i, 0]
)");
  PrimFunc compacted = CompactBufferAllocations(f, {}, AllocationPlacement::kGpu);
  ExpectFuncEqual(compacted, R"(@prim_func
def acc(A: Buffer((8, 8), float32), C: Buffer((8, 8), float32)):
    with allocate(S, (2, 1), float32, scope="local"):
        for k in range(8):
            for ty in thread_binding(4, thread="threadIdx.y"):
                for i in range(2):
                    if k == 0:
                        S[i, 0] = 0.0
                    S[i, 0] = S[i, 0] + A[ty * 2 + i, k]
        for ty2 in thread_binding(4, thread="threadIdx.y"):
            for i in range(2):
                C[ty2 * 2 + i, 0] = S[i, 0]
)");
}

// Each thread's elements lie `threads` apart (so that a warp's accesses are adjacent).
constexpr const char* kStridedThreadElements = R"(@prim_func
def acc(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with allocate(S, (8,), float32, scope="local"):
        for tx in thread_binding(4, thread="threadIdx.x"):
            for i in range(2):
                S[i * 4 + tx] = A[i * 4 + tx] * 2.0
        for tx2 in thread_binding(4, thread="threadIdx.x"):
            for i in range(2):
                C[i * 4 + tx2] = S[i * 4 + tx2]
)";

// A thread whose elements lie `threads` apart gets them packed: the dimension is divided by the
// stride.
TEST(CompactBufferAllocations, GpuLocalWithStridedThreadElementsIsPacked) {
  PrimFunc f = ParseFunc(kStridedThreadElements);
  PrimFunc compacted = CompactBufferAllocations(f, {}, AllocationPlacement::kGpu);
  ExpectFuncEqual(compacted, R"(@prim_func
def acc(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with allocate(S, (2,), float32, scope="local"):
        for tx in thread_binding(4, thread="threadIdx.x"):
            for i in range(2):
                S[i] = A[i * 4 + tx] * 2.0
        for tx2 in thread_binding(4, thread="threadIdx.x"):
            for i in range(2):
                C[i * 4 + tx2] = S[i]
)");
}

// On the CPU the same function keeps the buffer whole: thread-bound loops are loops there.
TEST(CompactBufferAllocations, CpuPlacementDoesNotCompactPerThread) {
  PrimFunc f = ParseFunc(kStridedThreadElements);
  PrimFunc compacted = CompactBufferAllocations(f);
  ExpectSameNumbers(f, compacted);
  EXPECT_EQ(Print(compacted).find("allocate(S, (2,)"), std::string::npos);
}

}  // namespace
}  // namespace tirtune
