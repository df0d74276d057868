// Each CPU postprocessor on its own, on small hand-scheduled functions.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "ir_texts.h"
#include "space_check.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/parser.h"
#include "tirtune/lower/lower.h"

namespace tirtune {
namespace {

using testing::CompareOutputs;
using testing::FindBlock;

PrimFunc Parse(const char* text) { return ParsePrimFunc(text, "test"); }

// The loops above block `name`, outermost first.
std::vector<const ForNode*> Loops(const PrimFunc& f, const std::string& name) {
  ScheduleState state(f);
  return state.LoopsAbove(state.FindBlock(name));
}

// kRelu over an (a, b, c) array instead of (8, 8, 32).
PrimFunc ReluOfShape(int a, int b, int c) {
  std::string text = testing::kRelu;
  const std::string shape = fmt::format("({}, {}, {})", a, b, c);
  for (auto [from, to] : {std::pair<std::string, std::string>{"(8, 8, 32)", shape},
                          {"(8, 8, 32)", shape},
                          {"range(8)", fmt::format("range({})", a)},
                          {"range(8)", fmt::format("range({})", b)},
                          {"range(32)", fmt::format("range({})", c)},
                          {"spatial(8, i)", fmt::format("spatial({}, i)", a)},
                          {"spatial(8, j)", fmt::format("spatial({}, j)", b)},
                          {"spatial(32, k)", fmt::format("spatial({}, k)", c)}}) {
    size_t at = text.find(from);
    if (at == std::string::npos) throw std::logic_error("kRelu has no " + from);
    text.replace(at, from.size(), to);
  }
  return ParsePrimFunc(text, "test");
}

// The GEMM tiled as i0 j0 k i1 j1 (4 x 3 x 8 x 4 x 4), root annotated as the rule does.
Schedule TiledGemm(int64_t unroll) {
  Schedule sch(Parse(testing::kGemm));
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(loops[0], {int64_t{4}, int64_t{4}});
  std::vector<LoopRV> j = sch.Split(loops[1], {int64_t{3}, int64_t{4}});
  sch.Reorder({i[0], j[0], loops[2], i[1], j[1]});
  BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, kAnnParallel, 32);
  sch.Annotate(root, kAnnVectorize, 64);
  sch.Annotate(root, kAnnUnrollExplicit, unroll);
  return sch;
}

// ---- DisallowDynamicLoop.

TEST(DisallowDynamicLoop, RejectsALoopWithASymbolicExtent) {
  Schedule sch(Parse(R"(@prim_func
def tri(A: Buffer((4, 4), float32), B: Buffer((4, 4), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for j in range(i + 1):
                with block("B"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(4, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj]
)"));
  EXPECT_FALSE(MakeDisallowDynamicLoop()->Apply(sch));
}

TEST(DisallowDynamicLoop, AcceptsConstantLoops) {
  Schedule sch(Parse(testing::kGemm));
  EXPECT_TRUE(MakeDisallowDynamicLoop()->Apply(sch));
}

// ---- RewriteParallelVectorizeUnroll.

TEST(RewriteParallelVectorizeUnroll, ParallelizesOuterLoopsAndVectorizesTheInnermost) {
  Schedule sch = TiledGemm(/*unroll=*/16);
  const PrimFunc before = sch.func();
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  std::vector<const ForNode*> loops = Loops(sch.func(), "C");
  ASSERT_EQ(loops.size(), 4u);  // i0 * j0 fused (12 <= 32; k is a reduction), k, i1, j1
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(*AsConstInt(loops[0]->extent), 12);
  EXPECT_EQ(*AsConstInt(loops[0]->annotations.at("pragma_auto_unroll_max_step")), 16);
  EXPECT_EQ(loops[3]->for_kind, ForKind::kVectorized);  // j1 only: i1 strides A by rows
  EXPECT_EQ(*AsConstInt(loops[3]->extent), 4);
  EXPECT_TRUE(FindBlock(sch.func(), "root")->annotations.empty());
  EXPECT_EQ(CompareOutputs(before, sch.func()), "");
}

TEST(RewriteParallelVectorizeUnroll, SplitsAnElementwiseNestIntoParallelAndVector) {
  Schedule sch(Parse(testing::kRelu));
  BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, kAnnParallel, 32);
  sch.Annotate(root, kAnnVectorize, 64);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  std::vector<const ForNode*> loops = Loops(sch.func(), "B");
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(*AsConstInt(loops[0]->extent), 8 * 8 * 32 / 64);
  EXPECT_EQ(loops[1]->for_kind, ForKind::kVectorized);
  EXPECT_EQ(*AsConstInt(loops[1]->extent), 64);
  EXPECT_EQ(CompareOutputs(Parse(testing::kRelu), sch.func()), "");
}

TEST(RewriteParallelVectorizeUnroll, SplitsTheInnermostLoopByWholeVectorsWhenNoDivisorIsOne) {
  // 7 x 5 x 33 = 1155 elements: the largest divisor within 64 is 55, which would read across
  // rows. The innermost loop goes by 32 lanes instead (the second vector guarded), the rest fused.
  PrimFunc f = ReluOfShape(7, 5, 33);
  Schedule sch(f);
  BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, kAnnParallel, 32);
  sch.Annotate(root, kAnnVectorize, 64);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  std::vector<const ForNode*> loops = Loops(sch.func(), "B");
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(*AsConstInt(loops[0]->extent), 7 * 5 * 2);
  EXPECT_EQ(loops[1]->for_kind, ForKind::kVectorized);
  EXPECT_EQ(*AsConstInt(loops[1]->extent), 32);
  EXPECT_EQ(CompareOutputs(f, sch.func()), "");
}

TEST(RewriteParallelVectorizeUnroll, ALeadingLoopOfExtentOneDoesNotStopTheParallelLoop) {
  // A batch of one in front, as in a model's epilogue [1, 56, 56, 64]: (1, 40, 32) under a
  // parallel limit of 32. The unit loop alone would give no parallelism; it is fused with the next.
  PrimFunc f = ReluOfShape(1, 40, 32);
  // An elementwise nest: fused whole, 1280 = 20 x 64.
  Schedule sch(f);
  BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, kAnnParallel, 32);
  sch.Annotate(root, kAnnVectorize, 64);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  std::vector<const ForNode*> loops = Loops(sch.func(), "B");
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(*AsConstInt(loops[0]->extent), 20);
  EXPECT_EQ(loops[1]->for_kind, ForKind::kVectorized);
  EXPECT_EQ(CompareOutputs(f, sch.func()), "");
  // Without a vectorize annotation (so no whole-nest split): the two outer loops are fused.
  Schedule narrow(f);
  BlockRV narrow_root = narrow.GetBlock("root");
  narrow.Annotate(narrow_root, kAnnParallel, 32);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(narrow));
  loops = Loops(narrow.func(), "B");
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(*AsConstInt(loops[0]->extent), 40);
  EXPECT_EQ(CompareOutputs(f, narrow.func()), "");
}

TEST(RewriteParallelVectorizeUnroll, DoesNotVectorizeAReductionLoop) {
  Schedule sch(Parse(testing::kNorm));
  BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, kAnnParallel, 32);
  sch.Annotate(root, kAnnVectorize, 64);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  std::vector<const ForNode*> loops = Loops(sch.func(), "S");
  EXPECT_EQ(loops[0]->for_kind, ForKind::kParallel);
  EXPECT_EQ(loops.back()->for_kind, ForKind::kSerial);
}

TEST(RewriteParallelVectorizeUnroll, LeavesAnUnannotatedFunctionAlone) {
  Schedule sch(Parse(testing::kGemm));
  const PrimFunc before = sch.func();
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  EXPECT_TRUE(sch.func().same_as(before));
}

// ---- RewriteReductionBlock.

TEST(RewriteReductionBlock, DecomposesAboveTheOutermostReductionLoop) {
  Schedule sch = TiledGemm(/*unroll=*/0);
  const PrimFunc before = sch.func();
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  ASSERT_TRUE(MakeRewriteReductionBlock()->Apply(sch));
  const BlockNode* c = FindBlock(sch.func(), "C");
  EXPECT_FALSE(c->init.defined());
  std::vector<const ForNode*> init_loops = Loops(sch.func(), "C_init");
  std::vector<const ForNode*> update_loops = Loops(sch.func(), "C");
  // The init shares the parallel loop and sits right above k.
  ASSERT_EQ(init_loops.size(), 3u);
  EXPECT_EQ(init_loops[0], update_loops[0]);
  EXPECT_EQ(init_loops[2]->for_kind, ForKind::kVectorized);
  EXPECT_EQ(CompareOutputs(before, sch.func()), "");
}

TEST(RewriteReductionBlock, KeepsTheInitOfAReductionWithoutAReductionLoop) {
  Schedule sch(Parse(R"(@prim_func
def unit_sum(A: Buffer((8, 1), float32), B: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            with block("B"):
                vi = axis.spatial(8, i)
                vk = axis.reduce(1, 0)
                reads(A[vi, vk])
                writes(B[vi])
                with init():
                    B[vi] = 0.0
                B[vi] = B[vi] + A[vi, vk]
)"));
  ASSERT_TRUE(MakeRewriteReductionBlock()->Apply(sch));
  EXPECT_TRUE(FindBlock(sch.func(), "B")->init.defined());
}

// ---- VerifyLowers.

// ---- RewriteLayout.

TEST(RewriteLayout, PacksALayoutFreeWeightInTheOrderItsLoopsReadIt) {
  PrimFunc original = WithLayoutFreeParams(Parse(testing::kGemm), {1});
  Schedule sch(original);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> i = sch.Split(loops[0], {int64_t{4}, int64_t{4}});
  std::vector<LoopRV> j = sch.Split(loops[1], {int64_t{3}, int64_t{4}});
  sch.Reorder({i[0], j[0], loops[2], i[1], j[1]});
  ASSERT_TRUE(MakeRewriteLayout()->Apply(sch));
  // B[k, j] read under i0 j0 k i1 j1: packed [j / 4, k, j % 4], the j1 loop steps by one.
  std::map<int, PackedLayout> packed = PackedParams(sch.func());
  ASSERT_EQ(packed.count(1), 1u);
  EXPECT_EQ(packed.at(1), (PackedLayout{{8, 12}, {{1, 4, 3}, {0, 1, 8}, {1, 1, 4}}}));
  EXPECT_EQ(packed.count(0), 0u);  // A is not layout-free
  EXPECT_EQ(testing::CompareOutputs(original, sch.func()), "");
  EXPECT_EQ(sch.trace().insts().back().kind->name, "TransformLayout");
}

TEST(RewriteLayout, FollowsAParallelLoopFusedFromTiles) {
  PrimFunc original = WithLayoutFreeParams(Parse(testing::kGemm), {1});
  Schedule sch(original);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> j = sch.Split(loops[1], {int64_t{3}, int64_t{4}});
  sch.Reorder({j[0], loops[0], loops[2], j[1]});
  LoopRV fused = sch.Fuse({j[0], loops[0]});
  sch.Parallel(fused);
  ASSERT_TRUE(MakeRewriteLayout()->Apply(sch));
  std::map<int, PackedLayout> packed = PackedParams(sch.func());
  ASSERT_EQ(packed.count(1), 1u);
  EXPECT_EQ(packed.at(1), (PackedLayout{{8, 12}, {{1, 4, 3}, {0, 1, 8}, {1, 1, 4}}}));
  EXPECT_EQ(testing::CompareOutputs(original, sch.func()), "");
}

TEST(RewriteLayout, LeavesOtherParametersAndReadOrderAlone) {
  // Not layout-free: nothing changes.
  Schedule plain(Parse(testing::kGemm));
  ASSERT_TRUE(MakeRewriteLayout()->Apply(plain));
  EXPECT_TRUE(PackedParams(plain.func()).empty());
  // Layout-free A[i, k], read under i j k: already in its loops' order.
  Schedule in_order(WithLayoutFreeParams(Parse(testing::kGemm), {0}));
  ASSERT_TRUE(MakeRewriteLayout()->Apply(in_order));
  EXPECT_TRUE(PackedParams(in_order.func()).empty());
  EXPECT_TRUE(in_order.trace().insts().empty());
}

TEST(VerifyLowers, AcceptsAScheduleThatLowers) {
  Schedule sch = TiledGemm(/*unroll=*/64);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  EXPECT_TRUE(MakeVerifyLowers()->Apply(sch));
}

TEST(VerifyLowers, RejectsAFunctionThatIsNotWellFormed) {
  // The block reads A without listing it.
  Schedule sch(Parse(R"(@prim_func
def bad(A: Buffer((8,), float32), B: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            with block("B"):
                vi = axis.spatial(8, i)
                reads()
                writes(B[vi])
                B[vi] = A[vi]
)"));
  EXPECT_FALSE(MakeVerifyLowers()->Apply(sch));
}

// ---- LowerForFeatures.

int CountStores(const PrimFunc& f) {
  struct Counter : StmtVisitor {
    int stores = 0;
    void VisitStmt_(const BufferStoreNode* op) override {
      ++stores;
      StmtVisitor::VisitStmt_(op);
    }
  } counter;
  counter.VisitStmt(f->body);
  return counter.stores;
}

TEST(LowerForFeatures, KeepsAnAutoUnrolledBodyOnceAndRemembersTheResult) {
  Schedule sch = TiledGemm(/*unroll=*/64);
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(sch));
  PrimFunc for_features = LowerForFeatures(sch.func());
  PrimFunc for_code = Lower(sch.func());
  EXPECT_GT(CountStores(for_code), CountStores(for_features));
  EXPECT_EQ(CountStores(for_features), 2);  // the init and the update
  EXPECT_TRUE(LowerForFeatures(sch.func()).same_as(for_features));
  EXPECT_EQ(CompareOutputs(sch.func(), for_features), "");
}

}  // namespace
}  // namespace tirtune
