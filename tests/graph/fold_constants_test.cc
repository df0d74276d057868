// FoldConstants: calls whose arguments are all constants are evaluated at compile time.
#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::SameResults;

// x -> conv2d with weights stored OIHW and transposed to the library's HWIO layout.
Graph ConvWithTransposedWeights() {
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 2}));
  ValueId w = g.AddConstant("w_oihw", RandomArray({3, 2, 3, 3}, 5));
  ValueId wt = AddOpCall(&g, "w_hwio", "transpose", {w}, {{"perm", Ints{2, 3, 1, 0}}});
  g.AddOutput(AddOpCall(&g, "conv", "conv2d", {x, wt}, {{"pad", 1}}));
  return g;
}

TEST(FoldConstantsTest, TransposedWeightsBecomeAConstant) {
  Graph g = ConvWithTransposedWeights();
  Graph folded = FoldConstants(g);
  EXPECT_EQ(
      PrintGraph(folded),
      R"(graph(%x: float32[1, 4, 4, 2], %w_oihw: const float32[3, 2, 3, 3], %w_hwio: const float32[3, 3, 2, 3]) {
  %conv = conv2d(%x, %w_hwio) {pad=1} : float32[1, 4, 4, 3]
  return %conv
}
)");
  EXPECT_NO_THROW(ValidateGraph(folded));
  EXPECT_TRUE(SameResults(g, folded));
  // The folded value is the transposed array.
  const NDArray& w = g.value(g.Find("w_oihw")).data;
  const NDArray& wt = folded.value(folded.Find("w_hwio")).data;
  for (int64_t o = 0; o < 3; ++o) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t h = 0; h < 3; ++h) {
        for (int64_t k = 0; k < 3; ++k) {
          EXPECT_EQ(wt.data<float>()[((h * 3 + k) * 2 + i) * 3 + o],
                    w.data<float>()[((o * 2 + i) * 3 + h) * 3 + k]);
        }
      }
    }
  }
}

TEST(FoldConstantsTest, FoldsChainsAndPrimFuncCalls) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  ValueId c = g.AddConstant("c", RandomArray({2, 3}, 1));
  ValueId e = AddOpCall(&g, "e", "exp", {c});
  ValueId s = AddOpCall(&g, "s", "add", {e, c});
  g.AddOutput(AddOpCall(&g, "y", "multiply", {x, s}));
  Graph legal = LegalizeOps(g);
  Graph folded = FoldConstants(legal);
  ASSERT_EQ(folded.calls().size(), 1u);
  EXPECT_EQ(folded.value(folded.Find("s")).kind, ValueKind::kConstant);
  EXPECT_TRUE(SameResults(g, folded));
  // s = exp(c) + c.
  const NDArray& cs = g.value(c).data;
  const NDArray& ss = folded.value(folded.Find("s")).data;
  NDArray expected = NDArray::Empty({2, 3}, DataType::Float(32));
  for (int64_t i = 0; i < 6; ++i)
    expected.SetDouble(i, std::exp(cs.GetDouble(i)) + cs.GetDouble(i));
  EXPECT_TRUE(AllClose(expected, ss));
}

TEST(FoldConstantsTest, CallsUsingInputsStay) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  g.AddOutput(AddOpCall(&g, "y", "relu", {x}));
  EXPECT_EQ(PrintGraph(FoldConstants(g)), PrintGraph(g));
}

}  // namespace
}  // namespace tirtune::graph
