// EliminateDeadCode: calls and constants no output depends on are removed; inputs stay.
#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"

namespace tirtune::graph {
namespace {

using testing::RandomArray;
using testing::SameResults;

TEST(DeadCodeTest, RemovesWhatNoOutputUses) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  ValueId unused = g.AddInput("unused", F32({4}));
  ValueId c = g.AddConstant("c", RandomArray({2, 3}, 1));
  ValueId dead_c = g.AddConstant("dead_c", RandomArray({4}, 2));
  ValueId a = AddOpCall(&g, "a", "add", {x, c});
  AddOpCall(&g, "dead", "add", {unused, dead_c});
  ValueId dead2 = AddOpCall(&g, "dead2", "tanh", {a});
  AddOpCall(&g, "dead3", "exp", {dead2});
  g.AddOutput(AddOpCall(&g, "y", "relu", {a}));
  Graph live = EliminateDeadCode(g);
  EXPECT_EQ(PrintGraph(live),
            R"(graph(%x: float32[2, 3], %unused: float32[4], %c: const float32[2, 3]) {
  %a = add(%x, %c) : float32[2, 3]
  %y = relu(%a) : float32[2, 3]
  return %y
}
)");
  EXPECT_TRUE(SameResults(g, live));
}

TEST(DeadCodeTest, KeepsEveryOutput) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  ValueId a = AddOpCall(&g, "a", "relu", {x});
  ValueId b = AddOpCall(&g, "b", "exp", {x});
  g.AddOutput(b);
  g.AddOutput(a);
  EXPECT_EQ(EliminateDeadCode(g).calls().size(), 2u);
}

}  // namespace
}  // namespace tirtune::graph
