// get_block, get_loops, get_child_blocks: what they find, that they survive transformations, and
// their errors.
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kTwoBlocks = R"(@prim_func
def two(A: Buffer((8, 4), float32), C: Buffer((8, 4), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((8, 4), float32)
        for i in range(8):
            for j in range(4):
                with block("B"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(4, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
            for j in range(4):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(4, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
)";

TEST(Lookup, GetLoopsListsOutermostFirst) {
  Schedule sch(ParseFunc(kTwoBlocks));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(sch.Get(loops[0])->loop_var->name, "i");
  EXPECT_EQ(sch.Get(loops[1])->loop_var->name, "j");  // names are hints; C has its own j
}

TEST(Lookup, GetChildBlocksOfRootAndOfALoop) {
  Schedule sch(ParseFunc(kTwoBlocks));
  auto root_children = sch.GetChildBlocks(sch.GetBlock("root"));
  ASSERT_EQ(root_children.size(), 2u);
  EXPECT_EQ(sch.BlockName(root_children[0]), "B");
  EXPECT_EQ(sch.BlockName(root_children[1]), "C");
  auto loops = sch.GetLoops(sch.GetBlock("B"));
  auto under_i = sch.GetChildBlocks(loops[0]);
  EXPECT_EQ(under_i.size(), 2u);
  auto under_j = sch.GetChildBlocks(loops[1]);
  ASSERT_EQ(under_j.size(), 1u);
  EXPECT_EQ(sch.BlockName(under_j[0]), "B");
}

TEST(Lookup, RandomVariablesSurviveTransformations) {
  PrimFunc f = ParseFunc(kTwoBlocks);
  Schedule sch(f);
  BlockRV c = sch.GetBlock("C");
  auto loops = sch.GetLoops(c);
  sch.Parallel(loops[0]);                             // rebuilds the loop and everything above C
  EXPECT_EQ(sch.Get(c)->block->name, "C");            // the block is found again
  EXPECT_EQ(sch.Get(loops[0])->for_kind, ForKind::kParallel);
  sch.Split(loops[1], {std::monostate{}, int64_t{2}});  // the loop is gone now
  ExpectScheduleError(sch, "LoopNotFoundError", "no longer exists",
                      [&] { sch.Unroll(loops[1]); });
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Lookup, GetBlockOfUnknownNameListsTheBlocks) {
  Schedule sch(ParseFunc(kTwoBlocks));
  ExpectScheduleError(sch, "BlockNotFoundError", "no block named 'D' (blocks: root, B, C)",
                      [&] { sch.GetBlock("D"); });
}

TEST(Lookup, LookupsArePureAndSimplifyAway) {
  Schedule sch(ParseFunc(kTwoBlocks));
  BlockRV b = sch.GetBlock("B");
  sch.GetLoops(b);
  sch.GetChildBlocks(b);
  EXPECT_EQ(sch.trace().insts().size(), 3u);
  EXPECT_TRUE(sch.trace().Simplified(false).empty());
}

}  // namespace
}  // namespace tirtune
