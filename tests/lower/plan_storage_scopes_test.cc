// PlanStorageScopes: only stack-sized scratch stays `local`.
#include "lower_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(PlanStorageScopes, SmallLocalStaysLargeLocalAndSharedBecomeGlobal) {
  PrimFunc f = ParseFunc(R"(@prim_func
def s(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    with allocate(L, (16,), float32, scope="local"):
        with allocate(H, (64,), float32, scope="local"):
            with allocate(S, (64,), float32, scope="shared"):
                for i in range(64):
                    S[i] = A[i]
                    H[i] = S[i]
                    L[i % 16] = H[i]
                    B[i] = L[i % 16]
)");
  PrimFunc planned = PlanStorageScopes(f, LowerOptions{.max_stack_bytes = 128});
  ExpectFuncEqual(planned, R"(@prim_func
def s(A: Buffer((64,), float32), B: Buffer((64,), float32)):
    with allocate(L, (16,), float32, scope="local"):
        with allocate(H, (64,), float32):
            with allocate(S, (64,), float32):
                for i in range(64):
                    S[i] = A[i]
                    H[i] = S[i]
                    L[i % 16] = H[i]
                    B[i] = L[i % 16]
)");
  ExpectSameNumbers(f, planned);
}

}  // namespace
}  // namespace tirtune
