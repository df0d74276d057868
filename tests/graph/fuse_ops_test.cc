// FuseOps and PartitionGraph: post-dominator grouping by fusion patterns. Each test builds a
// small graph, legalizes and annotates it, and states the groups as text: calls of one group in
// order, groups separated by " | ".
#include <gtest/gtest.h>

#include <map>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

using testing::ConvBiasRelu;
using testing::RandomArray;
using testing::SameResults;

Graph Prepare(const Graph& g) { return AnnotateOpPattern(LegalizeOps(g)); }

std::string Groups(const Graph& g, const FuseConfig& config = {}) {
  std::vector<int> group_of = PartitionGraph(g, config);
  std::map<int, std::vector<std::string>> groups;
  for (size_t i = 0; i < group_of.size(); ++i) {
    groups[group_of[i]].push_back(g.value(g.call(static_cast<int>(i)).output).name);
  }
  std::string text;
  for (const auto& [id, names] : groups) {
    if (!text.empty()) text += " | ";
    for (size_t i = 0; i < names.size(); ++i) text += (i ? " " : "") + names[i];
  }
  return text;
}

ValueId Conv(Graph* g, const std::string& name, ValueId x, int64_t channels_in,
             int64_t channels_out, uint64_t seed) {
  ValueId w = g->AddConstant(name + "_w", RandomArray({3, 3, channels_in, channels_out}, seed));
  return AddOpCall(g, name, "conv2d", {x, w}, {{"pad", 1}});
}

TEST(FuseOpsTest, ConvBiasReluFuseIntoOneGroup) {
  Graph g = Prepare(ConvBiasRelu());
  EXPECT_EQ(Groups(g), "conv bias relu");
  Graph fused = FuseOps(g);
  EXPECT_EQ(PrintGraph(fused),
            R"(graph(%x: float32[1, 6, 6, 3], %w: const float32[3, 3, 3, 4], %b: const float32[4]) {
  %relu = @fused_conv2d_bias_add_relu(%x, %w, %b) : float32[1, 6, 6, 4]  # out_ewise_fusable {
    %conv = call_tir @conv2d(%x, %w) : float32[1, 6, 6, 4]  # out_ewise_fusable
    %bias = call_tir @bias_add(%conv, %b) : float32[1, 6, 6, 4]  # broadcast
    %relu = call_tir @relu(%bias) : float32[1, 6, 6, 4]  # elemwise
    return %relu
  }
  return %relu
}
)");
  EXPECT_NO_THROW(ValidateGraph(fused));
  EXPECT_TRUE(SameResults(g, fused));
}

TEST(FuseOpsTest, DiamondReconvergesIntoOneGroup) {
  Graph g;
  ValueId in = g.AddInput("in", F32({2, 3}));
  ValueId x = AddOpCall(&g, "x", "sigmoid", {in});
  ValueId a = AddOpCall(&g, "a", "relu", {x});
  ValueId b = AddOpCall(&g, "b", "tanh", {x});
  g.AddOutput(AddOpCall(&g, "sum", "add", {a, b}));
  EXPECT_EQ(Groups(Prepare(g)), "x a b sum");
}

TEST(FuseOpsTest, ConvDiamondReconvergesIntoTheConvGroup) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId c = Conv(&g, "conv", in, 2, 2, 1);
  ValueId a = AddOpCall(&g, "a", "relu", {c});
  ValueId b = AddOpCall(&g, "b", "tanh", {c});
  g.AddOutput(AddOpCall(&g, "sum", "add", {a, b}));
  Graph prepared = Prepare(g);
  EXPECT_EQ(Groups(prepared), "conv a b sum");
  EXPECT_TRUE(SameResults(prepared, FuseOps(prepared)));
}

TEST(FuseOpsTest, TwoOutEwiseFusableOpsNeverFuse) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId c1 = Conv(&g, "conv1", in, 2, 2, 1);
  ValueId c2 = Conv(&g, "conv2", c1, 2, 2, 2);
  ValueId r = AddOpCall(&g, "relu", "relu", {c2});
  ValueId c3 = Conv(&g, "conv3", r, 2, 2, 3);
  g.AddOutput(c3);
  EXPECT_EQ(Groups(Prepare(g)), "conv1 | conv2 relu | conv3");
}

TEST(FuseOpsTest, ElementwiseProducerJoinsAConvGroup) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId y = g.AddInput("y", F32({1, 4, 4, 2}));
  ValueId c = Conv(&g, "conv", in, 2, 2, 1);
  ValueId r = AddOpCall(&g, "skip", "relu", {y});
  g.AddOutput(AddOpCall(&g, "sum", "add", {c, r}));
  EXPECT_EQ(Groups(Prepare(g)), "conv skip sum");
}

TEST(FuseOpsTest, ReductionsAreOnlySinks) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId r = AddOpCall(&g, "relu", "relu", {in});
  ValueId p = AddOpCall(&g, "pool", "max_pool2d", {r}, {{"kernel", 2}, {"stride", 2}});
  ValueId t = AddOpCall(&g, "tanh", "tanh", {p});
  ValueId f = AddOpCall(&g, "flat", "flatten", {t});
  ValueId s = AddOpCall(&g, "softmax", "softmax", {f});
  g.AddOutput(AddOpCall(&g, "exp", "exp", {s}));
  EXPECT_EQ(Groups(Prepare(g)), "relu pool | tanh flat softmax | exp");
}

TEST(FuseOpsTest, OpaqueCallsAreBarriers) {
  Graph g;
  ValueId in = g.AddInput("in", F32({2, 3}));
  ValueId a = AddOpCall(&g, "a", "relu", {in});
  ValueId b = AddOpCall(&g, "b", "tanh", {a});
  ValueId c = AddOpCall(&g, "c", "exp", {b});
  ValueId d = AddOpCall(&g, "d", "relu", {a});  // a diamond a -> {b -> c, d} -> e
  g.AddOutput(AddOpCall(&g, "e", "add", {c, d}));
  Graph prepared = Prepare(g);
  EXPECT_EQ(Groups(prepared), "a b c d e");
  prepared.mutable_call(1).pattern = OpPattern::kOpaque;  // b
  EXPECT_EQ(Groups(prepared), "a | b | c d e");
}

TEST(FuseOpsTest, GraphOutputsEndTheirGroup) {
  Graph g;
  ValueId in = g.AddInput("in", F32({2, 3}));
  ValueId a = AddOpCall(&g, "a", "relu", {in});
  ValueId b = AddOpCall(&g, "b", "tanh", {a});
  g.AddOutput(a);
  g.AddOutput(AddOpCall(&g, "c", "exp", {b}));
  EXPECT_EQ(Groups(Prepare(g)), "a | b c");
}

TEST(FuseOpsTest, InjectiveChainsFuseButNotIntoConv) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 2, 4, 4}));
  ValueId t = AddOpCall(&g, "nhwc", "transpose", {in}, {{"perm", Ints{0, 2, 3, 1}}});
  ValueId c = Conv(&g, "conv", t, 2, 2, 1);
  ValueId r = AddOpCall(&g, "relu", "relu", {c});
  ValueId back = AddOpCall(&g, "nchw", "transpose", {r}, {{"perm", Ints{0, 3, 1, 2}}});
  ValueId flat = AddOpCall(&g, "flat", "reshape", {back}, {{"shape", Ints{1, -1}}});
  g.AddOutput(AddOpCall(&g, "out", "sigmoid", {flat}));
  EXPECT_EQ(Groups(Prepare(g)), "nhwc | conv relu | nchw flat out");
}

TEST(FuseOpsTest, InjectiveJoinsAReductionInPhaseTwoOnlyWhenEnabled) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId p = AddOpCall(&g, "pad", "pad", {in},
                        {{"pads_before", Ints{0, 1, 1, 0}}, {"pads_after", Ints{0, 1, 1, 0}}});
  g.AddOutput(AddOpCall(&g, "pool", "avg_pool2d", {p}, {{"kernel", 3}}));
  Graph prepared = Prepare(g);
  EXPECT_EQ(Groups(prepared), "pad pool");
  EXPECT_EQ(Groups(prepared, FuseConfig{.fuse_injective_into_reduction = false}), "pad | pool");
  EXPECT_TRUE(SameResults(prepared, FuseOps(prepared)));
}

TEST(FuseOpsTest, GroupsRespectTheDepthLimit) {
  Graph g;
  ValueId x = g.AddInput("in", F32({2, 3}));
  for (int i = 0; i < 10; ++i) x = AddOpCall(&g, "r" + std::to_string(i), "relu", {x});
  g.AddOutput(x);
  Graph prepared = Prepare(g);
  EXPECT_EQ(Groups(prepared), "r0 r1 r2 r3 r4 r5 r6 r7 r8 r9");
  EXPECT_EQ(Groups(prepared, FuseConfig{.max_depth = 4}), "r0 r1 r2 r3 | r4 r5 r6 r7 | r8 r9");
}

TEST(FuseOpsTest, GroupsRespectTheArgumentLimit) {
  Graph g;
  ValueId x = g.AddInput("in", F32({2, 3}));
  for (int i = 0; i < 6; ++i) {
    ValueId c = g.AddInput("c" + std::to_string(i), F32({2, 3}));
    x = AddOpCall(&g, "s" + std::to_string(i), "add", {x, c});
  }
  g.AddOutput(x);
  Graph prepared = Prepare(g);
  EXPECT_EQ(Groups(prepared), "s0 s1 s2 s3 s4 s5");
  // in, c0, c1 and the output fill the four parameters of the first group.
  EXPECT_EQ(Groups(prepared, FuseConfig{.max_args = 4}), "s0 s1 | s2 s3 | s4 s5");
  Graph fused = FuseOps(prepared, FuseConfig{.max_args = 4});
  for (const Call& call : fused.calls()) EXPECT_LE(call.args.size() + 1, 4u);
  EXPECT_TRUE(SameResults(prepared, fused));
}

// conv-bn-relu, conv-bn, add the block's input, relu: the residual add and the last relu join
// the second convolution's group, and the block's input is an argument of both groups.
TEST(FuseOpsTest, ResidualBlockFormsTwoConvGroups) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId x = in;
  for (int i = 1; i <= 2; ++i) {
    std::string n = std::to_string(i);
    ValueId c = Conv(&g, "conv" + n, x, 2, 2, i);
    std::vector<ValueId> bn_args = {c};
    for (const char* p : {"gamma", "beta", "mean", "var"}) {
      bn_args.push_back(g.AddConstant(p + n, RandomArray({2}, 10 * i, 0.5, 1.5)));
    }
    x = AddOpCall(&g, "bn" + n, "batch_norm", bn_args);
    if (i == 1) x = AddOpCall(&g, "relu1", "relu", {x});
  }
  ValueId sum = AddOpCall(&g, "add", "add", {x, in});
  g.AddOutput(AddOpCall(&g, "relu2", "relu", {sum}));
  Graph prepared = Prepare(g);
  EXPECT_EQ(Groups(prepared), "conv1 bn1 relu1 | conv2 bn2 add relu2");
  Graph fused = FuseOps(prepared);
  ASSERT_EQ(fused.calls().size(), 2u);
  EXPECT_EQ(fused.call(1).op, "fused_conv2d_batch_norm_add_relu");
  EXPECT_TRUE(SameResults(prepared, fused));
}

TEST(FuseOpsTest, FusedGraphComputesTheSameOutputs) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId c = Conv(&g, "conv", in, 2, 3, 1);
  ValueId r = AddOpCall(&g, "relu", "relu", {c});
  ValueId p = AddOpCall(&g, "pool", "max_pool2d", {r}, {{"kernel", 2}, {"stride", 2}});
  ValueId f = AddOpCall(&g, "flat", "flatten", {p});
  ValueId w = g.AddConstant("dense_w", RandomArray({5, 12}, 9));
  ValueId d = AddOpCall(&g, "dense", "dense", {f, w});
  g.AddOutput(AddOpCall(&g, "out", "softmax", {d}));
  Graph prepared = Prepare(g);
  Graph fused = FuseOps(prepared);
  EXPECT_NO_THROW(ValidateGraph(fused));
  EXPECT_TRUE(SameResults(prepared, fused));
}

}  // namespace
}  // namespace tirtune::graph
