// FuseTIR: every group becomes one PrimFunc in block form whose intermediates are allocated by
// its root block; interpreting it gives what interpreting the group's calls one by one gives.
#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/verify.h"

namespace tirtune::graph {
namespace {

using testing::AllClose;
using testing::ConvBiasRelu;
using testing::RandomArray;
using testing::SameResults;

Graph Prepare(const Graph& g) { return AnnotateOpPattern(LegalizeOps(g)); }

const BlockNode* Root(const PrimFunc& f) { return f->body.as<BlockRealizeNode>()->block.get(); }

// Fuses `g` and checks the result: one PrimFunc call per group, each well formed, and the
// outputs of the graph and of every fused function equal to the unfused chain's.
Graph FuseAndCheck(const Graph& g, size_t expected_calls) {
  Graph prepared = Prepare(g);
  Graph grouped = FuseOps(prepared);
  Graph fused = FuseTIR(grouped);
  EXPECT_NO_THROW(ValidateGraph(fused));
  EXPECT_EQ(fused.calls().size(), expected_calls);
  for (const Call& call : fused.calls()) {
    EXPECT_EQ(call.kind, CallKind::kPrimFunc);
    std::vector<std::string> problems = VerifyWellFormed(call.func);
    EXPECT_TRUE(problems.empty()) << call.func->name << ": " << problems.front();
    // Tasks are stored by their text: it must parse back to the same function.
    EXPECT_TRUE(StructuralEqual(ParsePrimFunc(Print(call.func)), call.func)) << call.func->name;
  }
  // Each fused function against its group's body, on its own random arguments.
  for (size_t i = 0; i < grouped.calls().size(); ++i) {
    const Call& group = grouped.call(static_cast<int>(i));
    if (group.kind != CallKind::kGraph) continue;
    const PrimFunc& func = fused.call(static_cast<int>(i)).func;
    std::vector<NDArray> args = MakeRandomArgs(func, 11);
    std::vector<NDArray> inputs(args.begin(), args.end() - 1);
    NDArray expected = RunGraph(*group.body, inputs)[0];
    Interpret(func, args);
    EXPECT_TRUE(AllClose(expected, args.back())) << func->name;
  }
  EXPECT_TRUE(SameResults(prepared, fused));
  return fused;
}

TEST(FuseTIRTest, ConvBiasReluBecomesOneFunction) {
  Graph fused = FuseAndCheck(ConvBiasRelu(), 1);
  const Call& call = fused.call(0);
  EXPECT_EQ(call.func->name, "fused_conv2d_bias_add_relu");
  EXPECT_EQ(call.pattern, OpPattern::kOutEWiseFusable);
  ASSERT_EQ(call.func->params.size(), 4u);  // x, w, b, relu
  EXPECT_EQ(call.func->params[0]->name, "x");
  EXPECT_EQ(call.func->params[3]->name, "relu");
  // pad_temp, the convolution and the bias add are intermediates of the root block.
  std::vector<std::string> allocated;
  for (const Buffer& b : Root(call.func)->alloc_buffers) allocated.push_back(b->name);
  EXPECT_EQ(allocated, (std::vector<std::string>{"conv2d_nhwc", "pad_temp", "T_bias_add"}));
}

TEST(FuseTIRTest, ElementwiseChainPrintsAsOneFunction) {
  Graph g;
  ValueId a = g.AddInput("a", F32({2, 3}));
  ValueId b = g.AddInput("b", F32({3}));
  ValueId s = AddOpCall(&g, "s", "add", {a, b});
  g.AddOutput(AddOpCall(&g, "r", "relu", {s}));
  Graph fused = FuseAndCheck(g, 1);
  EXPECT_EQ(Print(fused.call(0).func), R"(@prim_func
def fused_add_relu(a: Buffer((2, 3), float32), b: Buffer((3,), float32), r: Buffer((2, 3), float32)):
    with block("root"):
        reads()
        writes()
        T_add = alloc_buffer((2, 3), float32)
        for i0 in range(2):
            for i1 in range(3):
                with block("T_add"):
                    vi0 = axis.spatial(2, i0)
                    vi1 = axis.spatial(3, i1)
                    reads(a[vi0, vi1], b[vi1])
                    writes(T_add[vi0, vi1])
                    T_add[vi0, vi1] = a[vi0, vi1] + b[vi1]
        for i0_1 in range(2):
            for i1_1 in range(3):
                with block("T_relu"):
                    vi0_1 = axis.spatial(2, i0_1)
                    vi1_1 = axis.spatial(3, i1_1)
                    reads(T_add[vi0_1, vi1_1])
                    writes(r[vi0_1, vi1_1])
                    r[vi0_1, vi1_1] = max(T_add[vi0_1, vi1_1], 0.0)
)");
}

TEST(FuseTIRTest, DiamondGroupsMatchTheUnfusedChain) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 4, 4, 2}));
  ValueId w = g.AddConstant("w", RandomArray({3, 3, 2, 2}, 1));
  ValueId c = AddOpCall(&g, "conv", "conv2d", {in, w}, {{"pad", 1}});
  ValueId a = AddOpCall(&g, "a", "relu", {c});
  ValueId b = AddOpCall(&g, "b", "tanh", {c});
  g.AddOutput(AddOpCall(&g, "sum", "add", {a, b}));
  FuseAndCheck(g, 1);
}

TEST(FuseTIRTest, InjectiveAndReductionGroupsMatchTheUnfusedChain) {
  Graph g;
  ValueId in = g.AddInput("in", F32({1, 2, 5, 4}));
  ValueId t = AddOpCall(&g, "t", "transpose", {in}, {{"perm", Ints{0, 2, 3, 1}}});
  ValueId p = AddOpCall(&g, "pad", "pad", {t},
                        {{"pads_before", Ints{0, 1, 1, 0}}, {"pads_after", Ints{0, 1, 1, 0}}});
  ValueId pool = AddOpCall(&g, "pool", "avg_pool2d", {p}, {{"kernel", 3}, {"stride", 2}});
  ValueId f = AddOpCall(&g, "flat", "flatten", {pool});
  ValueId s = AddOpCall(&g, "softmax", "softmax", {f});
  ValueId e = AddOpCall(&g, "e", "exp", {s});
  g.AddOutput(AddOpCall(&g, "scaled", "multiply", {e, s}));
  // t pad pool | flat softmax | e scaled
  FuseAndCheck(g, 3);
}

TEST(FuseTIRTest, AFunctionUsedTwiceInAGroupIsCopied) {
  Graph g;
  ValueId in = g.AddInput("in", F32({2, 3}));
  PrimFunc relu = LegalizeOp(*FindOp("relu"), {F32({2, 3})}, {}, "relu");
  Call call;
  call.kind = CallKind::kPrimFunc;
  call.op = "relu";
  call.func = relu;
  call.pattern = OpPattern::kElemWise;
  call.args = {in};
  ValueId r1 = g.AddCall("r1", call, F32({2, 3}));
  call.args = {r1};
  g.AddOutput(g.AddCall("r2", call, F32({2, 3})));
  Graph fused = FuseTIR(FuseOps(g));
  ASSERT_EQ(fused.calls().size(), 1u);
  const PrimFunc& func = fused.call(0).func;
  EXPECT_TRUE(VerifyWellFormed(func).empty());
  EXPECT_NE(Print(func).find("block(\"T_relu_1\")"), std::string::npos) << Print(func);
  EXPECT_TRUE(SameResults(g, fused));
}

TEST(FuseTIRTest, GroupsOfOperatorCallsAreRejected) {
  Graph grouped = FuseOps(ConvBiasRelu());  // operator calls, grouped by declared patterns
  ASSERT_EQ(grouped.calls().size(), 1u);
  try {
    FuseTIR(grouped);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("run LegalizeOps first"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tirtune::graph
