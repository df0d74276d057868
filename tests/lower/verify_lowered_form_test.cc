// VerifyLoweredForm: names each way a function breaks the lowered-form contract of lower.h.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

bool Mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(VerifyLoweredForm, AcceptsALoweredFunction) {
  PrimFunc f = ParseFunc(R"(@prim_func
def ok(A: Buffer((32,), float32), B: Buffer((32,), float32)):
    for i in parallel(4):
        with allocate(T, (8,), float32, scope="local"):
            T[ramp(0, 1, 8)] = A[ramp(i * 8, 1, 8)]
            for j in range(8, annotations={"pragma_unroll": 8}):
                B[i * 8 + j] = T[j]
)");
  EXPECT_EQ(VerifyLoweredForm(f), std::vector<std::string>{});
}

TEST(VerifyLoweredForm, NamesBlocksMultiDimensionalBuffersAndLeftoverLoopKinds) {
  PrimFunc f = ParseFunc(R"(@prim_func
def bad(A: Buffer((4, 8), float32), B: Buffer((32,), float32)):
    with block("root"):
        reads()
        writes()
        for i in parallel(4):
            for j in parallel(8):
                for k in vectorized(1):
                    with block("B"):
                        vi = axis.spatial(4, i)
                        vj = axis.spatial(8, j)
                        reads(A[vi, vj])
                        writes(B[vi * 8 + vj])
                        B[vi * 8 + vj] = A[vi, vj]
        for u in unroll(100):
            B[u % 32] = 0.0
)");
  std::vector<std::string> problems = VerifyLoweredForm(f);
  EXPECT_TRUE(Mentions(problems, "parameter A has 2 dimensions")) << problems.size();
  EXPECT_TRUE(Mentions(problems, "block B remains"));
  EXPECT_TRUE(Mentions(problems, "parallel loop j is nested"));
  EXPECT_TRUE(Mentions(problems, "vectorized loop k remains"));
  EXPECT_TRUE(Mentions(problems, "unrolled loop u"));
}

TEST(VerifyLoweredForm, AcceptsWhatLowerProduces) {
  PrimFunc f = ParseFunc(R"(@prim_func
def fine(A: Buffer((4, 8), float32), B: Buffer((4, 8), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj]
)");
  EXPECT_NO_THROW(Lower(f));
  EXPECT_EQ(VerifyLoweredForm(Lower(f)), std::vector<std::string>{});
}

}  // namespace
}  // namespace tirtune
