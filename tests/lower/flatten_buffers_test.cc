// FlattenBuffers: every buffer becomes one-dimensional, indices become one int64 offset.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(FlattenBuffers, ParametersAndAllocationsBecomeRowMajorOneDimensional) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((4, 8), float32), S: Buffer((1,), float32), C: Buffer((4, 8), float32)):
    with allocate(T, (2, 3, 4), float32):
        for i in range(4):
            for j in range(8):
                T[i // 2, 1, j // 2] = A[i, j] + S[0]
                C[i, j] = T[i // 2, 1, j // 2]
)");
  PrimFunc flat = FlattenBuffers(f);
  ExpectFuncEqual(flat, R"(@prim_func
def f(A: Buffer((32,), float32), S: Buffer((1,), float32), C: Buffer((32,), float32)):
    with allocate(T, (24,), float32):
        for i in range(4):
            for j in range(8):
                T[i // 2 * 12 + 4 + j // 2] = A[i * 8 + j] + S[0]
                C[i * 8 + j] = T[i // 2 * 12 + 4 + j // 2]
)");
  EXPECT_TRUE(flat->params[1].same_as(f->params[1])) << "a flat buffer is kept as it is";
  ExpectSameNumbers(f, flat);
}

TEST(FlattenBuffers, NarrowIndicesAreWidenedToInt64) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((4, 8), float32), C: Buffer((8,), float32)):
    for i in range(int32(4)):
        for j in range(int32(8)):
            C[j] = A[i, j]
)");
  PrimFunc flat = FlattenBuffers(f);
  ExpectFuncEqual(flat, R"(@prim_func
def f(A: Buffer((32,), float32), C: Buffer((8,), float32)):
    for i in range(int32(4)):
        for j in range(int32(8)):
            C[int64(j)] = A[int64(i) * 8 + int64(j)]
)");
  ExpectSameNumbers(f, flat);
}

TEST(FlattenBuffers, ExplicitStridesGiveTheIndexAndTheSpan) {
  PrimFunc f = ParseFunc(R"(@prim_func
def f(A: Buffer((4, 8), float32), C: Buffer((4, 8), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((4, 8), float32, strides=(10, 1))
        for i in range(4):
            for j in range(8):
                with block("T"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(T[vi, vj])
                    T[vi, vj] = A[vi, vj]
        for i in range(4):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(T[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = T[vi, vj]
)");
  PrimFunc flat = FlattenBuffers(ConvertBlocksToLoops(f));
  ExpectFuncEqual(flat, R"(@prim_func
def f(A: Buffer((32,), float32), C: Buffer((32,), float32)):
    with allocate(T, (38,), float32):
        for i in range(4):
            for j in range(8):
                T[i * 10 + j] = A[i * 8 + j]
        for i in range(4):
            for j in range(8):
                C[i * 8 + j] = T[i * 10 + j]
)");
  ExpectSameNumbers(f, flat);
}

}  // namespace
}  // namespace tirtune
