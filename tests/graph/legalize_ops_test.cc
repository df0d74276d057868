// LegalizeOps: every operator call becomes a call of the PrimFunc its operator builds, and the
// graph computes the same values.
#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

using testing::ConvBiasRelu;
using testing::SameResults;

TEST(LegalizeOpsTest, EveryCallBecomesAPrimFuncCall) {
  Graph g = ConvBiasRelu();
  Graph legal = LegalizeOps(g);
  EXPECT_EQ(PrintGraph(legal),
            R"(graph(%x: float32[1, 6, 6, 3], %w: const float32[3, 3, 3, 4], %b: const float32[4]) {
  %conv = call_tir @conv2d(%x, %w) : float32[1, 6, 6, 4]  # out_ewise_fusable
  %bias = call_tir @bias_add(%conv, %b) : float32[1, 6, 6, 4]  # broadcast
  %relu = call_tir @relu(%bias) : float32[1, 6, 6, 4]  # elemwise
  return %relu
}
)");
  EXPECT_NO_THROW(ValidateGraph(legal));
  const Call& conv = legal.CallOf("conv");
  EXPECT_EQ(conv.op, "conv2d");
  EXPECT_EQ(conv.attrs.GetInt("pad"), 1);  // kept as a hint
  ASSERT_EQ(conv.func->params.size(), 3u);
  EXPECT_EQ(conv.func->params[0]->name, "data");
  EXPECT_EQ(conv.func->params[1]->name, "weight");
  EXPECT_TRUE(SameResults(g, legal));
}

TEST(LegalizeOpsTest, EveryCallGetsItsOwnFunction) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  ValueId a = AddOpCall(&g, "a", "relu", {x});
  g.AddOutput(AddOpCall(&g, "b", "relu", {a}));
  Graph legal = LegalizeOps(g);
  EXPECT_FALSE(legal.call(0).func.same_as(legal.call(1).func));
}

TEST(LegalizeOpsTest, InvalidGraphsAreRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  g.AddOutput(g.AddOp("y", "frobnicate", {x}, {}, F32({2, 3})));
  EXPECT_THROW(LegalizeOps(g), GraphError);
}

}  // namespace
}  // namespace tirtune::graph
