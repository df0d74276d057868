// SimplifyInference: batch_norm with constant statistics becomes multiply and add by constants.
#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::SameResults;

Graph ConvBatchNormRelu() {
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 2}));
  ValueId w = g.AddConstant("w", RandomArray({3, 3, 2, 3}, 1));
  ValueId c = AddOpCall(&g, "conv", "conv2d", {x, w}, {{"pad", 1}});
  ValueId gamma = g.AddConstant("gamma", RandomArray({3}, 2));
  ValueId beta = g.AddConstant("beta", RandomArray({3}, 3));
  ValueId mean = g.AddConstant("mean", RandomArray({3}, 4));
  ValueId var = g.AddConstant("var", RandomArray({3}, 5, 0.5, 1.5));
  ValueId bn = AddOpCall(&g, "bn", "batch_norm", {c, gamma, beta, mean, var}, {{"epsilon", 1e-3}});
  g.AddOutput(AddOpCall(&g, "relu", "relu", {bn}));
  return g;
}

TEST(SimplifyInferenceTest, BatchNormBecomesScaleAndShift) {
  Graph g = ConvBatchNormRelu();
  Graph simple = EliminateDeadCode(SimplifyInference(g));
  EXPECT_EQ(
      PrintGraph(simple),
      R"(graph(%x: float32[1, 4, 4, 2], %w: const float32[3, 3, 2, 3], %bn_scale: const float32[3], %bn_shift: const float32[3]) {
  %conv = conv2d(%x, %w) {pad=1} : float32[1, 4, 4, 3]
  %bn_scaled = multiply(%conv, %bn_scale) : float32[1, 4, 4, 3]
  %bn = add(%bn_scaled, %bn_shift) : float32[1, 4, 4, 3]
  %relu = relu(%bn) : float32[1, 4, 4, 3]
  return %relu
}
)");
  EXPECT_NO_THROW(ValidateGraph(simple));
  EXPECT_TRUE(SameResults(g, simple));
  // The epilogue still fuses into the convolution.
  Graph fused = FuseOps(AnnotateOpPattern(LegalizeOps(simple)));
  ASSERT_EQ(fused.calls().size(), 1u);
  EXPECT_EQ(fused.call(0).op, "fused_conv2d_multiply_add_relu");
}

TEST(SimplifyInferenceTest, BatchNormOfComputedStatisticsStays) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  ValueId gamma = g.AddInput("gamma", F32({3}));  // not a constant
  ValueId c = g.AddConstant("c", RandomArray({3}, 1, 0.5, 1.5));
  g.AddOutput(AddOpCall(&g, "bn", "batch_norm", {x, gamma, c, c, c}));
  EXPECT_EQ(PrintGraph(SimplifyInference(g)), PrintGraph(g));
}

}  // namespace
}  // namespace tirtune::graph
