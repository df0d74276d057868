// UnswitchTileGuards: the guards of non-dividing splits leave the full tiles, which run a copy
// without them; the partial tiles keep them; guards it cannot reason about stay as they were.
#include "lower_check.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/printer.h"
#include "tirtune/lower/lower.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(UnswitchTileGuards, FullColumnTilesRunWithoutTheGuardAndThePartialTileKeepsIt) {
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((5,), float32), B: Buffer((5, 10), float32), C: Buffer((10,), float32)):
    for j0 in range(3):
        for k in range(5):
            for j1 in range(4):
                if j0 * 4 + j1 < 10:
                    C[j0 * 4 + j1] = C[j0 * 4 + j1] + A[k] * B[k, j0 * 4 + j1]
)");
  PrimFunc unswitched = UnswitchTileGuards(f);
  ExpectFuncEqual(unswitched, R"(@prim_func
def c(A: Buffer((5,), float32), B: Buffer((5, 10), float32), C: Buffer((10,), float32)):
    for j0 in range(3):
        if j0 < 2:
            for k in range(5):
                for j1 in range(4):
                    C[j0 * 4 + j1] = C[j0 * 4 + j1] + A[k] * B[k, j0 * 4 + j1]
        else:
            for k in range(5):
                for j1 in range(4):
                    if j0 * 4 + j1 < 10:
                        C[j0 * 4 + j1] = C[j0 * 4 + j1] + A[k] * B[k, j0 * 4 + j1]
)");
  ExpectSameNumbers(f, unswitched);
}

TEST(UnswitchTileGuards, ImpliedConjunctsLeaveAndOthersStay) {
  // The row guard (written as >=) is decided by i0, the column guard by j0: each is dropped
  // where its test passed. The test that loads from a buffer stays everywhere.
  PrimFunc f = ParseFunc(R"(@prim_func
def c(M: Buffer((7,), int32), A: Buffer((7, 7), float32), B: Buffer((7, 7), float32)):
    for i0 in range(4):
        for j0 in range(3):
            for i1 in range(2):
                for j1 in range(3):
                    if 6 >= i0 * 2 + i1 and j0 * 3 + j1 < 7 and M[j0 * 3 + j1 - j0 * 3 - j1] > 0:
                        B[i0 * 2 + i1, j0 * 3 + j1] = A[i0 * 2 + i1, j0 * 3 + j1] * 2.0
)");
  PrimFunc unswitched = UnswitchTileGuards(f);
  ExpectFuncEqual(unswitched, R"(@prim_func
def c(M: Buffer((7,), int32), A: Buffer((7, 7), float32), B: Buffer((7, 7), float32)):
    for i0 in range(4):
        if i0 < 3:
            for j0 in range(3):
                if j0 < 2:
                    for i1 in range(2):
                        for j1 in range(3):
                            if M[j0 * 3 + j1 - j0 * 3 - j1] > 0:
                                B[i0 * 2 + i1, j0 * 3 + j1] = A[i0 * 2 + i1, j0 * 3 + j1] * 2.0
                else:
                    for i1 in range(2):
                        for j1 in range(3):
                            if j0 * 3 + j1 < 7 and M[j0 * 3 + j1 - j0 * 3 - j1] > 0:
                                B[i0 * 2 + i1, j0 * 3 + j1] = A[i0 * 2 + i1, j0 * 3 + j1] * 2.0
        else:
            for j0 in range(3):
                if j0 < 2:
                    for i1 in range(2):
                        for j1 in range(3):
                            if 6 >= i0 * 2 + i1 and M[j0 * 3 + j1 - j0 * 3 - j1] > 0:
                                B[i0 * 2 + i1, j0 * 3 + j1] = A[i0 * 2 + i1, j0 * 3 + j1] * 2.0
                else:
                    for i1 in range(2):
                        for j1 in range(3):
                            if 6 >= i0 * 2 + i1 and j0 * 3 + j1 < 7 and M[j0 * 3 + j1 - j0 * 3 - j1] > 0:
                                B[i0 * 2 + i1, j0 * 3 + j1] = A[i0 * 2 + i1, j0 * 3 + j1] * 2.0
)");
  ExpectSameNumbers(f, unswitched);
}

TEST(UnswitchTileGuards, LeavesBodiesWithoutRuntimeLoopsAndNonlinearGuardsAlone) {
  // The body of j0 holds only a vectorized loop: after vectorizing, an `if` there would sit in the
  // innermost loop. The guard on a product of loops is not linear in them.
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((10,), float32), B: Buffer((10,), float32)):
    for j0 in range(3):
        for j1 in vectorized(4):
            if j0 * 4 + j1 < 10:
                B[j0 * 4 + j1] = A[j0 * 4 + j1]
    for i0 in range(3):
        for k in range(2):
            for i1 in range(4):
                if i0 * i1 < 7:
                    B[i1] = A[i1 + k]
)");
  PrimFunc unswitched = UnswitchTileGuards(f);
  EXPECT_TRUE(unswitched->body.same_as(f->body)) << Print(unswitched);
}

TEST(UnswitchTileGuards, AFailedTestIsNotRepeatedInThePartialCopy) {
  // The column test j0 < 2 fails in the partial copy of the i0 body; the body of k under it
  // must not be split on it again (its full copy could never run).
  PrimFunc f = ParseFunc(R"(@prim_func
def c(A: Buffer((10,), float32), B: Buffer((10,), float32)):
    for j0 in range(3):
        for k in range(2):
            for k1 in range(2):
                for j1 in range(4):
                    if j0 * 4 + j1 < 10:
                        B[j0 * 4 + j1] = B[j0 * 4 + j1] + A[j0 * 4 + j1]
)");
  PrimFunc unswitched = UnswitchTileGuards(f);
  int ifs = 0;
  PreOrderVisit(unswitched->body, [&](const Object* node) {
    ifs += node->kind() == NodeKind::kIfThenElse;
    return true;
  });
  EXPECT_EQ(ifs, 2) << Print(unswitched);  // the test, and the guard in the partial copy
  ExpectSameNumbers(f, unswitched);
}

TEST(UnswitchTileGuards, GuardedGemmTilesGiveTheInterpretersNumbersAndVectorizeWhenFull) {
  // 13 = 3 * 4 + 1 and 10 = 2 * 4 + 2: partial tiles on both spatial axes and the reduction.
  PrimFunc gemm = MakeWorkload("gemm:13,10,9").func;
  Schedule sch(gemm);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(loops[0], {std::monostate{}, int64_t{4}});
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate{}, int64_t{4}});
  std::vector<LoopRV> k = sch.Split(loops[2], {std::monostate{}, int64_t{2}});
  sch.Reorder({i[0], j[0], k[0], i[1], k[1], j[1]});
  sch.Parallel(i[0]);
  sch.Vectorize(j[1]);
  PrimFunc lowered = Lower(sch.func());
  ExpectSameNumbers(gemm, lowered);
  LowerOptions guarded;
  guarded.unswitch_tile_guards = false;
  ExpectSameNumbers(gemm, Lower(sch.func(), guarded));
  bool vector_store = false;
  PreOrderVisit(lowered->body, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferStore) {
      vector_store |= static_cast<const BufferStoreNode*>(node)->value.dtype().lanes() == 4;
    }
    return true;
  });
  EXPECT_TRUE(vector_store) << Print(lowered);
}

}  // namespace
}  // namespace tirtune
