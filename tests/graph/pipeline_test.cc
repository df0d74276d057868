// The whole graph pipeline on a small conv-bn-relu-pool-dense network: the outputs before and
// after every pass agree, and the tasks are the fused functions.
#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/extract_tasks.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

using testing::RandomArray;
using testing::SameResults;

// x[1, 8, 8, 3] -> conv2d 3x3 (weights stored OIHW, transposed) -> batch_norm -> relu
// -> max_pool 2x2 -> flatten -> dense(10) -> bias_add -> softmax.
Graph SmallNetwork() {
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 8, 8, 3}));
  ValueId w = g.AddConstant("conv_w", RandomArray({4, 3, 3, 3}, 1));
  ValueId wt = AddOpCall(&g, "conv_w_hwio", "transpose", {w}, {{"perm", Ints{2, 3, 1, 0}}});
  ValueId conv = AddOpCall(&g, "conv", "conv2d", {x, wt}, {{"pad", 1}});
  ValueId gamma = g.AddConstant("bn_gamma", RandomArray({4}, 2));
  ValueId beta = g.AddConstant("bn_beta", RandomArray({4}, 3));
  ValueId mean = g.AddConstant("bn_mean", RandomArray({4}, 4));
  ValueId var = g.AddConstant("bn_var", RandomArray({4}, 5, 0.5, 1.5));
  ValueId bn = AddOpCall(&g, "bn", "batch_norm", {conv, gamma, beta, mean, var});
  ValueId relu = AddOpCall(&g, "relu", "relu", {bn});
  ValueId pool = AddOpCall(&g, "pool", "max_pool2d", {relu}, {{"kernel", 2}, {"stride", 2}});
  ValueId flat = AddOpCall(&g, "flat", "flatten", {pool});
  ValueId dw = g.AddConstant("fc_w", RandomArray({10, 64}, 6));
  ValueId db = g.AddConstant("fc_b", RandomArray({10}, 7));
  ValueId dense = AddOpCall(&g, "fc", "dense", {flat, dw});
  ValueId bias = AddOpCall(&g, "fc_bias", "bias_add", {dense, db});
  g.AddOutput(AddOpCall(&g, "prob", "softmax", {bias}));
  return g;
}

TEST(PipelineTest, EveryPassKeepsTheOutputs) {
  Graph model = SmallNetwork();
  Graph g = model;
  for (auto [name, pass] : PipelinePasses()) {
    g = pass(g);
    EXPECT_NO_THROW(ValidateGraph(g)) << name;
    EXPECT_TRUE(SameResults(model, g, /*seed=*/11, /*tol=*/1e-5)) << name;
  }
  // batch_norm became a multiply and an add by constants; the transposed weights were folded.
  EXPECT_EQ(
      PrintGraph(g),
      R"(graph(%x: float32[1, 8, 8, 3], %fc_w: const float32[10, 64], %fc_b: const float32[10], %bn_scale: const float32[4], %bn_shift: const float32[4], %conv_w_hwio: const float32[3, 3, 3, 4]) {
  %relu = call_tir @fused_conv2d_multiply_add_relu(%x, %conv_w_hwio, %bn_scale, %bn_shift) : float32[1, 8, 8, 4]  # out_ewise_fusable
  %pool = call_tir @max_pool2d(%relu) : float32[1, 4, 4, 4]  # comm_reduce
  %flat = call_tir @flatten(%pool) : float32[1, 64]  # injective
  %fc_bias = call_tir @fused_dense_bias_add(%flat, %fc_w, %fc_b) : float32[1, 10]  # out_ewise_fusable
  %prob = call_tir @softmax(%fc_bias) : float32[1, 10]  # comm_reduce
  return %prob
}
)");
  std::vector<Task> tasks = ExtractTasks(g);
  ASSERT_EQ(tasks.size(), 5u);
  EXPECT_EQ(tasks[0].name, "fused_conv2d_multiply_add_relu");
  EXPECT_EQ(tasks[3].name, "fused_dense_bias_add");
  for (const Task& t : tasks) EXPECT_EQ(t.weight, 1);
}

}  // namespace
}  // namespace tirtune::graph
