// SimplifyStatements: simplified expressions, and no statement that decides nothing.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(SimplifyStatements, DropsUnitLoopsDecidedIfsEmptyLoopsAndNoOps) {
  PrimFunc f = ParseFunc(R"(@prim_func
def s(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in range(4):
        for j in range(1):
            if i * 2 + j < 8:
                B[i * 2 + j + 1] = A[i + j * 4]
            else:
                B[0] = 1.0
        for k in range(0):
            B[k] = 0.0
        if i == 5:
            B[i] = 2.0
        evaluate(0)
        for u in range(2):
            if u > 3:
                B[u] = 3.0
)");
  PrimFunc simple = SimplifyStatements(f);
  ExpectFuncEqual(simple, R"(@prim_func
def s(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in range(4):
        B[i * 2 + 1] = A[i]
)");
  ExpectSameNumbers(f, simple);
}

TEST(SimplifyStatements, KeepsAnAnnotatedUnitLoopForTheUnroller) {
  const char* text = R"(@prim_func
def s(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in range(4):
        for u in range(1, annotations={"pragma_auto_unroll_max_step": 8}):
            for j in range(2):
                B[i * 8 + u * 2 + j] = A[i]
)";
  ExpectFuncEqual(SimplifyStatements(ParseFunc(text)), R"(@prim_func
def s(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in range(4):
        for u in range(1, annotations={"pragma_auto_unroll_max_step": 8}):
            for j in range(2):
                B[i * 8 + j + u * 2] = A[i]
)");
}

TEST(SimplifyStatements, UsesTheLoopRangesToDecideConditionsAndDivisions) {
  PrimFunc f = ParseFunc(R"(@prim_func
def s(A: Buffer((16,), float32), B: Buffer((16,), float32)):
    for i in range(4):
        for j in range(4):
            if i * 4 + j < 16:
                B[(i * 4 + j) // 4 * 4 + (i * 4 + j) % 4] = A[(i * 4 + j) // 4]
)");
  PrimFunc simple = SimplifyStatements(f);
  ExpectFuncEqual(simple, R"(@prim_func
def s(A: Buffer((16,), float32), B: Buffer((16,), float32)):
    for i in range(4):
        for j in range(4):
            B[i * 4 + j] = A[i]
)");
  ExpectSameNumbers(f, simple);
}

TEST(SimplifyStatements, AllocationOfAnEmptyBodyDisappears) {
  PrimFunc f = ParseFunc(R"(@prim_func
def s(A: Buffer((16,), float32)):
    with allocate(T, (4,), float32):
        for i in range(4):
            if i > 8:
                T[i] = A[i]
)");
  PrimFunc simple = SimplifyStatements(f);
  const auto* eval = simple->body.as<EvaluateNode>();
  ASSERT_NE(eval, nullptr) << Print(simple);
  EXPECT_TRUE(IsConstInt(eval->value, 0));
}

}  // namespace
}  // namespace tirtune
