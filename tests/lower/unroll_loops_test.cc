// UnrollLoops: small unrolled loops are expanded, large ones are left to the code generator, and
// "pragma_auto_unroll_max_step" unrolls the small loop nests inside the annotated loop.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(UnrollLoops, SmallLoopIsExpandedLargeOneBecomesSerialWithPragma) {
  PrimFunc f = ParseFunc(R"(@prim_func
def u(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4):
        for j in unroll(2):
            B[i * 2 + j] = A[i * 2 + j]
    for k in unroll(64):
        B[k] = B[k] + 1.0
)");
  PrimFunc unrolled = UnrollLoops(f, LowerOptions{.max_explicit_unroll = 8});
  ExpectFuncEqual(unrolled, R"(@prim_func
def u(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4):
        B[i * 2 + 0] = A[i * 2 + 0]
        B[i * 2 + 1] = A[i * 2 + 1]
    for k in range(64, annotations={"pragma_unroll": 8}):
        B[k] = B[k] + 1.0
)");
  ExpectSameNumbers(f, unrolled);
}

TEST(UnrollLoops, AutoUnrollExpandsInnerNestsWithinTheStepLimit) {
  PrimFunc f = ParseFunc(R"(@prim_func
def u(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4, annotations={"pragma_auto_unroll_max_step": 8}):
        for j in range(2):
            for k in range(2):
                B[i * 16 + j * 2 + k] = A[i * 16 + j * 2 + k]
        for j in range(16):
            B[i * 16 + j] = B[i * 16 + j] * 2.0
)");
  PrimFunc unrolled = UnrollLoops(f);
  ExpectFuncEqual(unrolled, R"(@prim_func
def u(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4):
        B[i * 16 + 0 * 2 + 0] = A[i * 16 + 0 * 2 + 0]
        B[i * 16 + 0 * 2 + 1] = A[i * 16 + 0 * 2 + 1]
        B[i * 16 + 1 * 2 + 0] = A[i * 16 + 1 * 2 + 0]
        B[i * 16 + 1 * 2 + 1] = A[i * 16 + 1 * 2 + 1]
        for j in range(16):
            B[i * 16 + j] = B[i * 16 + j] * 2.0
)");
  ExpectSameNumbers(f, unrolled);
}

TEST(UnrollLoops, TheFormForFeaturesExpandsNothingAndKeepsTheAnnotations) {
  PrimFunc f = ParseFunc(R"(@prim_func
def u(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4, annotations={"pragma_auto_unroll_max_step": 8}):
        for j in range(2):
            B[i * 16 + j] = A[i * 16 + j]
        for k in unroll(4):
            B[i * 16 + 2 + k] = A[i * 16 + 2 + k]
)");
  PrimFunc kept =
      UnrollLoops(f, LowerOptions{.max_explicit_unroll = 0, .expand_auto_unroll = false});
  ExpectFuncEqual(kept, R"(@prim_func
def u(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    for i in range(4, annotations={"pragma_auto_unroll_max_step": 8}):
        for j in range(2):
            B[i * 16 + j] = A[i * 16 + j]
        for k in range(4, annotations={"pragma_unroll": 4}):
            B[i * 16 + 2 + k] = A[i * 16 + 2 + k]
)");
  ExpectSameNumbers(f, kept);
}

TEST(UnrollLoops, LoopThatAllocatesIsNotExpandedButItsInnerLoopsAre) {
  PrimFunc f = ParseFunc(R"(@prim_func
def u(A: Buffer((8,), float32), B: Buffer((8,), float32)):
    for i in unroll(2):
        with allocate(T, (4,), float32):
            for j in unroll(4):
                T[j] = A[i * 4 + j]
            for j in range(4):
                B[i * 4 + j] = T[3 - j]
)");
  PrimFunc unrolled = UnrollLoops(f);
  ExpectFuncEqual(unrolled, R"(@prim_func
def u(A: Buffer((8,), float32), B: Buffer((8,), float32)):
    for i in range(2, annotations={"pragma_unroll": 2}):
        with allocate(T, (4,), float32):
            T[0] = A[i * 4 + 0]
            T[1] = A[i * 4 + 1]
            T[2] = A[i * 4 + 2]
            T[3] = A[i * 4 + 3]
            for j in range(4):
                B[i * 4 + j] = T[3 - j]
)");
  ExpectSameNumbers(f, unrolled);
}

TEST(UnrollLoops, CopiesGetTheirOwnInnerLoopVariables) {
  PrimFunc f = ParseFunc(R"(@prim_func
def u(A: Buffer((8,), float32), B: Buffer((8,), float32)):
    for i in unroll(2):
        for j in range(4):
            B[i * 4 + j] = A[i * 4 + j]
)");
  PrimFunc unrolled = UnrollLoops(f);
  ExpectFuncEqual(unrolled, R"(@prim_func
def u(A: Buffer((8,), float32), B: Buffer((8,), float32)):
    for j in range(4):
        B[0 * 4 + j] = A[0 * 4 + j]
    for j in range(4):
        B[1 * 4 + j] = A[1 * 4 + j]
)");
  const auto* seq = unrolled->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  EXPECT_FALSE(seq->seq[0].as<ForNode>()->loop_var.same_as(seq->seq[1].as<ForNode>()->loop_var));
  EXPECT_TRUE(VerifyWellFormed(unrolled).empty());
  ExpectSameNumbers(f, unrolled);
}

}  // namespace
}  // namespace tirtune
