// annotate / unannotate on loops and blocks.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

TEST(Annotate, AddsTypedValuesToLoopAndBlock) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  sch.Annotate(loops[0], "pragma_auto_unroll_max_step", 64);
  sch.Annotate(block, "schedule_rule", "matmul");
  sch.Annotate(block, "weight", 0.5);
  const ForNode* loop = sch.Get(loops[0]);
  ASSERT_EQ(loop->annotations.count("pragma_auto_unroll_max_step"), 1u);
  EXPECT_TRUE(IsConstInt(loop->annotations.at("pragma_auto_unroll_max_step"), 64));
  const BlockNode* b = sch.Get(block)->block.get();
  EXPECT_EQ(b->annotations.at("schedule_rule").as<StringImmNode>()->value, "matmul");
  EXPECT_EQ(b->annotations.at("weight").as<FloatImmNode>()->value, 0.5);
  ExpectTraceRoundTrip(sch, f);
  ExpectSameNumbers(f, sch.func());
}

TEST(Annotate, UnannotateRemovesTheKey) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Annotate(loops[1], "k", 1);
  sch.Unannotate(loops[1], "k");
  EXPECT_TRUE(StructuralEqual(sch.func(), f));
  ExpectTraceRoundTrip(sch, f);
}

TEST(Annotate, UnannotateOfMissingKeyFails) {
  Schedule sch(ParseFunc(kGemm));
  BlockRV block = sch.GetBlock("C");
  ExpectScheduleError(sch, "AnnotationNotFoundError", "no annotation 'absent'",
                      [&] { sch.Unannotate(block, "absent"); });
}

}  // namespace
}  // namespace tirtune
