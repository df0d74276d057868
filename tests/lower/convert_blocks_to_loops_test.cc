// ConvertBlocksToLoops: blocks disappear into their bindings, predicates and allocations.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(ConvertBlocksToLoops, BindingsAreSubstitutedPredicatesBecomeIfsAllocationsEncloseTheBody) {
  PrimFunc f = ParseFunc(R"(@prim_func
def copy_pred(A: Buffer((10,), float32), C: Buffer((10,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((10,), float32)
        for i0 in range(3):
            for i1 in range(4):
                with block("B"):
                    vi = axis.spatial(10, i0 * 4 + i1)
                    where(i0 * 4 + i1 < 10)
                    reads(A[vi])
                    writes(B[vi])
                    B[vi] = A[vi] * 2.0
        for i in range(10):
            with block("C"):
                vi = axis.spatial(10, i)
                reads(B[vi])
                writes(C[vi])
                C[vi] = B[vi] + 1.0
)");
  PrimFunc lowered = ConvertBlocksToLoops(f);
  ExpectFuncEqual(lowered, R"(@prim_func
def copy_pred(A: Buffer((10,), float32), C: Buffer((10,), float32)):
    with allocate(B, (10,), float32):
        for i0 in range(3):
            for i1 in range(4):
                if i0 * 4 + i1 < 10:
                    B[i0 * 4 + i1] = A[i0 * 4 + i1] * 2.0
        for i in range(10):
            C[i] = B[i] + 1.0
)");
  ExpectSameNumbers(f, lowered);
}

TEST(ConvertBlocksToLoops, NestedBlockAllocatesAroundItsOwnBodyAndSeesOuterIterators) {
  PrimFunc f = ParseFunc(R"(@prim_func
def rows(A: Buffer((4, 8), float32), C: Buffer((4, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            with block("row"):
                vi = axis.spatial(4, i)
                reads(A[vi, 0:8])
                writes(C[vi, 0:8])
                T = alloc_buffer((8,), float32, scope="local")
                for j in range(8):
                    with block("T"):
                        vj = axis.spatial(8, j)
                        reads(A[vi, vj])
                        writes(T[vj])
                        T[vj] = A[vi, vj] + 1.0
                for j in range(8):
                    with block("C"):
                        vj = axis.spatial(8, j)
                        reads(T[vj])
                        writes(C[vi, vj])
                        C[vi, vj] = T[vj] * 3.0
)");
  PrimFunc lowered = ConvertBlocksToLoops(f);
  ExpectFuncEqual(lowered, R"(@prim_func
def rows(A: Buffer((4, 8), float32), C: Buffer((4, 8), float32)):
    for i in range(4):
        with allocate(T, (8,), float32, scope="local"):
            for j in range(8):
                T[j] = A[i, j] + 1.0
            for j_1 in range(8):
                C[i, j_1] = T[j_1] * 3.0
)");
  ExpectSameNumbers(f, lowered);
}

TEST(ConvertBlocksToLoops, RejectsABlockWithAnInit) {
  PrimFunc f = ParseFunc(R"(@prim_func
def sum(A: Buffer((4,), float32), C: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        for k in range(4):
            with block("C"):
                vk = axis.reduce(4, k)
                reads(A[vk])
                writes(C[0])
                with init():
                    C[0] = 0.0
                C[0] = C[0] + A[vk]
)");
  EXPECT_THROW(ConvertBlocksToLoops(f), InternalError);
}

}  // namespace
}  // namespace tirtune
