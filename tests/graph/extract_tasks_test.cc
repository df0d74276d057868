// ExtractTasks: one task per structurally distinct function, weighted by its number of calls.
#include "tirtune/graph/extract_tasks.h"

#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using testing::RandomArray;

TEST(ExtractTasksTest, EqualFunctionsAreOneTaskWeightedByUses) {
  // Two conv+relu blocks of one shape, then a third of another shape.
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 2}));
  for (int i = 0; i < 3; ++i) {
    int64_t out_channels = i < 2 ? 2 : 3;
    std::string n = std::to_string(i);
    ValueId w = g.AddConstant("w" + n, RandomArray({3, 3, 2, out_channels}, i));
    ValueId c = AddOpCall(&g, "conv" + n, "conv2d", {x, w}, {{"pad", 1}});
    x = AddOpCall(&g, "relu" + n, "relu", {c});
  }
  g.AddOutput(x);
  Graph fused = FuseTIR(FuseOps(AnnotateOpPattern(LegalizeOps(g))));
  std::vector<Task> tasks = ExtractTasks(fused);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].name, "fused_conv2d_relu");
  EXPECT_EQ(tasks[0].weight, 2);
  EXPECT_EQ(tasks[1].name, "fused_conv2d_relu_1");
  EXPECT_EQ(tasks[1].weight, 1);
  EXPECT_EQ(tasks[0].workload_key, StructuralHashHex(tasks[0].func));
  EXPECT_NE(tasks[0].workload_key, tasks[1].workload_key);
}

TEST(ExtractTasksTest, OperatorCallsAreRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  g.AddOutput(AddOpCall(&g, "y", "relu", {x}));
  EXPECT_THROW(ExtractTasks(g), UserError);
  EXPECT_EQ(ExtractTasks(LegalizeOps(g)).size(), 1u);
}

}  // namespace
}  // namespace tirtune::graph
