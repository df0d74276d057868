// LowerInitBlocks: a reduction init runs when all reduction iterators are at their minimum.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(LowerInitBlocks, InitIsGuardedByEveryReductionIteratorAtItsMin) {
  PrimFunc f = ParseFunc(R"(@prim_func
def sum_rows(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for k0 in range(2):
                for k1 in range(4):
                    with block("C"):
                        vi = axis.spatial(4, i)
                        vk0 = axis.reduce(2, k0)
                        vk1 = axis.reduce(4, k1, min=0)
                        reads(A[vi, vk0 * 4 + vk1])
                        writes(C[vi])
                        with init():
                            C[vi] = 0.0
                        C[vi] = C[vi] + A[vi, vk0 * 4 + vk1]
)");
  PrimFunc lowered = LowerInitBlocks(f);
  ExpectFuncEqual(lowered, R"(@prim_func
def sum_rows(A: Buffer((4, 8), float32), C: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for k0 in range(2):
                for k1 in range(4):
                    with block("C"):
                        vi = axis.spatial(4, i)
                        vk0 = axis.reduce(2, k0)
                        vk1 = axis.reduce(4, k1)
                        reads(A[vi, vk0 * 4 + vk1])
                        writes(C[vi])
                        if vk0 == 0 and vk1 == 0:
                            C[vi] = 0.0
                        C[vi] = C[vi] + A[vi, vk0 * 4 + vk1]
)");
  ExpectSameNumbers(f, lowered);
}

TEST(LowerInitBlocks, ReductionDomainWithNonZeroMinComparesWithThatMin) {
  PrimFunc f = ParseFunc(R"(@prim_func
def tail_sum(A: Buffer((8,), float32), C: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        for k in range(5):
            with block("C"):
                vk = axis.reduce(5, k + 3, min=3)
                reads(A[vk])
                writes(C[0])
                with init():
                    C[0] = 0.0
                C[0] = C[0] + A[vk]
)");
  PrimFunc lowered = LowerInitBlocks(f);
  ExpectFuncEqual(lowered, R"(@prim_func
def tail_sum(A: Buffer((8,), float32), C: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        for k in range(5):
            with block("C"):
                vk = axis.reduce(5, k + 3, min=3)
                reads(A[vk])
                writes(C[0])
                if vk == 3:
                    C[0] = 0.0
                C[0] = C[0] + A[vk]
)");
  ExpectSameNumbers(f, lowered);
}

TEST(LowerInitBlocks, InitWithoutReductionIteratorsRunsUnconditionally) {
  PrimFunc f = ParseFunc(R"(@prim_func
def reset(A: Buffer((4,), float32), C: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            with block("C"):
                vi = axis.spatial(4, i)
                reads(A[vi])
                writes(C[vi])
                with init():
                    C[vi] = 1.0
                C[vi] = C[vi] + A[vi]
)");
  PrimFunc lowered = LowerInitBlocks(f);
  ExpectFuncEqual(lowered, R"(@prim_func
def reset(A: Buffer((4,), float32), C: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            with block("C"):
                vi = axis.spatial(4, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = 1.0
                C[vi] = C[vi] + A[vi]
)");
  ExpectSameNumbers(f, lowered);
}

TEST(LowerInitBlocks, FunctionWithoutInitsIsUnchanged) {
  PrimFunc f = ParseFunc(R"(@prim_func
def copy(A: Buffer((4,), float32), C: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            with block("C"):
                vi = axis.spatial(4, i)
                reads(A[vi])
                writes(C[vi])
                C[vi] = A[vi]
)");
  EXPECT_TRUE(LowerInitBlocks(f)->body.same_as(f->body));
}

}  // namespace
}  // namespace tirtune
