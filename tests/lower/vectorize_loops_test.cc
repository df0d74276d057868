// VectorizeLoops: vectorized loops become vector statements when that provably computes the same
// thing, and annotated serial loops otherwise.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

// Expects VectorizeLoops to leave `text` as it is but for the vectorized loops, which become
// serial loops annotated "pragma_vectorize" = 1 (`expected` shows them so).
void ExpectSerialFallback(const std::string& text, const std::string& expected) {
  PrimFunc f = ParseFunc(text);
  PrimFunc vectorized = VectorizeLoops(f);
  ExpectFuncEqual(vectorized, expected);
  ExpectSameNumbers(f, vectorized);
}

TEST(VectorizeLoops, LinearIndicesBecomeRampsInvariantValuesBroadcastsInvariantIfsStay) {
  PrimFunc f = ParseFunc(R"(@prim_func
def v(A: Buffer((32,), float32), B: Buffer((4,), float32), C: Buffer((32,), float32)):
    for i in range(4):
        for j in vectorized(8):
            if i == 0:
                C[i * 8 + j] = 0.0
            C[i * 8 + j] = C[i * 8 + j] + A[j * 4 + i] * B[i] + float32(j)
)");
  PrimFunc vectorized = VectorizeLoops(f);
  ExpectFuncEqual(vectorized, R"(@prim_func
def v(A: Buffer((32,), float32), B: Buffer((4,), float32), C: Buffer((32,), float32)):
    for i in range(4):
        if i == 0:
            C[ramp(i * 8, 1, 8)] = broadcast(0.0, 8)
        C[ramp(i * 8, 1, 8)] = C[ramp(i * 8, 1, 8)] + A[ramp(i, 4, 8)] * broadcast(B[i], 8) + float32x8(ramp(0, 1, 8))
)");
  ExpectSameNumbers(f, vectorized);
}

TEST(VectorizeLoops, LaneDependentIfBecomesSelectsWhenEveryLaneIsInBounds) {
  PrimFunc f = ParseFunc(R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for i in range(2):
        for j in vectorized(8):
            if j < 5:
                C[i * 8 + j] = A[i * 8 + j]
            else:
                C[i * 8 + j] = 0.0
)");
  PrimFunc vectorized = VectorizeLoops(f);
  ExpectFuncEqual(vectorized, R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for i in range(2):
        C[ramp(i * 8, 1, 8)] = select(ramp(0, 1, 8) < broadcast(5, 8), A[ramp(i * 8, 1, 8)], C[ramp(i * 8, 1, 8)])
        C[ramp(i * 8, 1, 8)] = select(not ramp(0, 1, 8) < broadcast(5, 8), broadcast(0.0, 8), C[ramp(i * 8, 1, 8)])
)");
  ExpectSameNumbers(f, vectorized);
}

TEST(VectorizeLoops, ReductionIntoALoopInvariantElementStaysSerial) {
  ExpectSerialFallback(R"(@prim_func
def v(A: Buffer((32,), float32), C: Buffer((4,), float32)):
    for i in range(4):
        for j in vectorized(8):
            C[i] = C[i] + A[i * 8 + j]
)",
                       R"(@prim_func
def v(A: Buffer((32,), float32), C: Buffer((4,), float32)):
    for i in range(4):
        for j in range(8, annotations={"pragma_vectorize": 1}):
            C[i] = C[i] + A[i * 8 + j]
)");
}

TEST(VectorizeLoops, LanesThatReadWhatAnotherLaneWroteStaySerial) {
  ExpectSerialFallback(R"(@prim_func
def v(A: Buffer((9,), float32)):
    for j in vectorized(8):
        A[j + 1] = A[j] * 2.0
)",
                       R"(@prim_func
def v(A: Buffer((9,), float32)):
    for j in range(8, annotations={"pragma_vectorize": 1}):
        A[j + 1] = A[j] * 2.0
)");
}

TEST(VectorizeLoops, DisjointAccessesOfOneBufferVectorize) {
  PrimFunc f = ParseFunc(R"(@prim_func
def v(C: Buffer((16,), float32)):
    for j in vectorized(8):
        C[j + 8] = C[j]
)");
  PrimFunc vectorized = VectorizeLoops(f);
  ExpectFuncEqual(vectorized, R"(@prim_func
def v(C: Buffer((16,), float32)):
    C[ramp(8, 1, 8)] = C[ramp(0, 1, 8)]
)");
  ExpectSameNumbers(f, vectorized);
}

TEST(VectorizeLoops, NonLinearIndexStaysSerial) {
  ExpectSerialFallback(R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for j in vectorized(8):
        C[j] = A[j // 2]
)",
                       R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for j in range(8, annotations={"pragma_vectorize": 1}):
        C[j] = A[j // 2]
)");
}

TEST(VectorizeLoops, NestedLoopStaysSerial) {
  ExpectSerialFallback(R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for j in vectorized(8):
        for k in range(2):
            C[j * 2 + k] = A[j * 2 + k]
)",
                       R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for j in range(8, annotations={"pragma_vectorize": 1}):
        for k in range(2):
            C[j * 2 + k] = A[j * 2 + k]
)");
}

TEST(VectorizeLoops, MaskedLaneThatWouldLeaveTheBufferStaysSerial) {
  // Lanes 3 and 4 are masked off, but C[12] and C[16] would still be read: 16 is out of bounds.
  ExpectSerialFallback(R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for j in vectorized(5):
        if j < 3:
            C[j * 4] = A[j * 4] + A[j]
)",
                       R"(@prim_func
def v(A: Buffer((16,), float32), C: Buffer((16,), float32)):
    for j in range(5, annotations={"pragma_vectorize": 1}):
        if j < 3:
            C[j * 4] = A[j * 4] + A[j]
)");
}

TEST(VectorizeLoops, SameInvariantValueStoredByEveryLaneIsStoredOnce) {
  PrimFunc f = ParseFunc(R"(@prim_func
def v(A: Buffer((8,), float32), C: Buffer((8,), float32), D: Buffer((1,), float32)):
    for j in vectorized(8):
        D[0] = 1.0
        C[j] = A[j]
)");
  PrimFunc vectorized = VectorizeLoops(f);
  ExpectFuncEqual(vectorized, R"(@prim_func
def v(A: Buffer((8,), float32), C: Buffer((8,), float32), D: Buffer((1,), float32)):
    D[0] = 1.0
    C[ramp(0, 1, 8)] = A[ramp(0, 1, 8)]
)");
  ExpectSameNumbers(f, vectorized);
}

TEST(VectorizeLoops, InvariantStoreOfAValueThatReadsItStaysSerial) {
  ExpectSerialFallback(R"(@prim_func
def v(C: Buffer((8,), float32), D: Buffer((1,), float32)):
    for j in vectorized(8):
        D[0] = D[0] + 1.0
        C[j] = D[0]
)",
                       R"(@prim_func
def v(C: Buffer((8,), float32), D: Buffer((1,), float32)):
    for j in range(8, annotations={"pragma_vectorize": 1}):
        D[0] = D[0] + 1.0
        C[j] = D[0]
)");
}

}  // namespace
}  // namespace tirtune
