// SerializeNestedParallel: only the outermost parallel loop of a nest stays parallel.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(SerializeNestedParallel, InnerParallelLoopBecomesSerialSiblingsStayParallel) {
  PrimFunc f = ParseFunc(R"(@prim_func
def p(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in parallel(4):
        for j in parallel(8):
            B[i * 8 + j] = A[i * 8 + j]
    for k in parallel(32):
        B[k] = B[k] + 1.0
)");
  PrimFunc serialized = SerializeNestedParallel(f);
  ExpectFuncEqual(serialized, R"(@prim_func
def p(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in parallel(4):
        for j in range(8):
            B[i * 8 + j] = A[i * 8 + j]
    for k in parallel(32):
        B[k] = B[k] + 1.0
)");
  ExpectSameNumbers(f, serialized);
}

TEST(SerializeNestedParallel, ThreadBoundLoopBecomesSerial) {
  PrimFunc f = ParseFunc(R"(@prim_func
def p(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in thread_binding(32, thread="threadIdx.x"):
        B[i] = A[i]
)");
  ExpectFuncEqual(SerializeNestedParallel(f), R"(@prim_func
def p(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in range(32):
        B[i] = A[i]
)");
}

}  // namespace
}  // namespace tirtune
