// AnalyzeOpPattern and the AnnotateOpPattern pass: the pattern computed from each operator's
// legalized function is the pattern the operator declares, and the analysis sees through shapes
// (a broadcast operator on equal shapes is elementwise).
#include "tirtune/graph/op_pattern.h"

#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/ir/parser.h"

namespace tirtune::graph {
namespace {

OpPattern PatternOf(const std::string& op, const std::vector<TensorType>& inputs,
                    const Attrs& attrs = {}) {
  return AnalyzeOpPattern(LegalizeOp(*FindOp(op), inputs, attrs, op));
}

TEST(OpPatternTest, ComputedPatternAgreesWithTheDeclaredOneOnEveryOperator) {
  for (const OpDef& op : AllOps()) {
    EXPECT_EQ(OpPatternName(PatternOf(op.name, op.example_inputs, op.example_attrs)),
              std::string(OpPatternName(op.pattern)))
        << op.name;
  }
}

TEST(OpPatternTest, BroadcastOnEqualShapesIsElementwise) {
  EXPECT_EQ(PatternOf("add", {F32({2, 3}), F32({2, 3})}), OpPattern::kElemWise);
  EXPECT_EQ(PatternOf("add", {F32({2, 3}), F32({3})}), OpPattern::kBroadcast);
  EXPECT_EQ(PatternOf("add", {F32({2, 3}), F32({1, 3})}), OpPattern::kBroadcast);
  EXPECT_EQ(PatternOf("add", {F32({2, 3}), F32({2, 1})}), OpPattern::kBroadcast);
}

TEST(OpPatternTest, TransposeIsInjectiveNotBroadcast) {
  EXPECT_EQ(PatternOf("transpose", {F32({2, 3})}, {{"perm", Ints{1, 0}}}), OpPattern::kInjective);
}

TEST(OpPatternTest, ReductionsWithoutAProductAreCommReduce) {
  EXPECT_EQ(PatternOf("max_pool2d", {F32({1, 4, 4, 2})}, {{"kernel", 2}, {"stride", 2}}),
            OpPattern::kCommReduce);
  EXPECT_EQ(PatternOf("dense", {F32({2, 3}), F32({4, 3})}), OpPattern::kOutEWiseFusable);
}

TEST(OpPatternTest, StoresOutsideBlocksAreOpaque) {
  PrimFunc func = ParsePrimFunc(R"(@prim_func
def copy(A: Buffer((4,), float32), B: Buffer((4,), float32)):
    for i in range(4):
        B[i] = A[i]
)");
  EXPECT_EQ(AnalyzeOpPattern(func), OpPattern::kOpaque);
}

TEST(OpPatternTest, AnnotateSetsTheComputedPatternOnEveryCall) {
  Graph g;
  ValueId a = g.AddInput("a", F32({2, 3}));
  ValueId b = g.AddInput("b", F32({2, 3}));
  g.AddOutput(AddOpCall(&g, "sum", "add", {a, b}));
  Graph legal = LegalizeOps(g);
  EXPECT_EQ(legal.CallOf("sum").pattern, OpPattern::kBroadcast);  // declared
  EXPECT_EQ(AnnotateOpPattern(legal).CallOf("sum").pattern, OpPattern::kElemWise);
}

}  // namespace
}  // namespace tirtune::graph
