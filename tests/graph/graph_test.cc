// The graph IR: building graphs with type inference, the printed form, and the validator's
// errors for malformed graphs, each naming the node at fault.
#include "tirtune/graph/graph.h"

#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/printer.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

using testing::ConvBiasRelu;
using testing::RandomArray;

// The message of the GraphError that `f` throws, or "" when it throws none.
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

TEST(GraphTest, AddOpCallInfersTheOutputType) {
  Graph g = ConvBiasRelu();
  EXPECT_EQ(g.value(g.Find("conv")).type, F32({1, 6, 6, 4}));
  EXPECT_EQ(g.value(g.Find("relu")).type, F32({1, 6, 6, 4}));
  EXPECT_EQ(g.CallOf("conv").pattern, OpPattern::kOutEWiseFusable);
  EXPECT_NO_THROW(ValidateGraph(g));
}

TEST(GraphTest, RenamingAValueFreesItsOldNameAndRefusesATakenOne) {
  Graph g = ConvBiasRelu();
  ValueId relu = g.Find("relu");
  g.RenameValue(relu, "y");
  EXPECT_EQ(g.Find("y"), relu);
  EXPECT_EQ(g.Find("relu"), -1);
  EXPECT_EQ(g.value(relu).name, "y");
  EXPECT_THROW(g.RenameValue(relu, "conv"), UserError);
  EXPECT_EQ(g.value(relu).name, "y");
  EXPECT_NO_THROW(ValidateGraph(g));
}

TEST(GraphTest, PrintsOneLinePerCall) {
  EXPECT_EQ(PrintGraph(ConvBiasRelu()),
            R"(graph(%x: float32[1, 6, 6, 3], %w: const float32[3, 3, 3, 4], %b: const float32[4]) {
  %conv = conv2d(%x, %w) {pad=1} : float32[1, 6, 6, 4]
  %bias = bias_add(%conv, %b) : float32[1, 6, 6, 4]
  %relu = relu(%bias) : float32[1, 6, 6, 4]
  return %relu
}
)");
}

TEST(GraphTest, PrintsAttributesOfEveryType) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  AddOpCall(&g, "c", "clip", {x}, {{"min", 0.0}, {"max", 6.5}});
  ValueId r = AddOpCall(&g, "r", "reshape", {x}, {{"shape", Ints{3, -1}}});
  g.AddOutput(r);
  std::string text = PrintGraph(g);
  EXPECT_NE(text.find("%c = clip(%x) {max=6.5, min=0.0} : float32[2, 3]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%r = reshape(%x) {shape=[3, -1]} : float32[3, 2]"), std::string::npos)
      << text;
}

TEST(GraphTest, DuplicateNamesAreRejected) {
  Graph g;
  g.AddInput("x", F32({2}));
  EXPECT_THROW(g.AddInput("x", F32({2})), UserError);
}

TEST(GraphTest, UnknownOperatorNamesTheNode) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  std::string msg = ErrorOf([&] { AddOpCall(&g, "y", "frobnicate", {x}); });
  EXPECT_NE(msg.find("%y = frobnicate(%x)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown operator 'frobnicate'"), std::string::npos) << msg;

  g.AddOp("z", "frobnicate", {x}, {}, F32({2}));
  g.AddOutput(g.Find("z"));
  msg = ErrorOf([&] { ValidateGraph(g); });
  EXPECT_NE(msg.find("%z = frobnicate(%x): unknown operator"), std::string::npos) << msg;
}

TEST(GraphTest, ShapeMismatchNamesTheNode) {
  Graph g;
  ValueId a = g.AddInput("a", F32({2, 3}));
  ValueId b = g.AddInput("b", F32({4}));
  std::string msg = ErrorOf([&] { AddOpCall(&g, "sum", "add", {a, b}); });
  EXPECT_NE(msg.find("%sum = add(%a, %b)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;

  // A declared result type that the operator does not produce.
  g.AddOp("r", "relu", {a}, {}, F32({3, 2}));
  g.AddOutput(g.Find("r"));
  msg = ErrorOf([&] { ValidateGraph(g); });
  EXPECT_NE(msg.find("%r = relu(%a): shape mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32[2, 3]"), std::string::npos) << msg;
}

TEST(GraphTest, MissingAttributeNamesTheNodeAndAttribute) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  std::string msg = ErrorOf([&] { AddOpCall(&g, "r", "reshape", {x}); });
  EXPECT_NE(msg.find("%r = reshape(%x)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing required attribute 'shape'"), std::string::npos) << msg;
}

TEST(GraphTest, UnknownAndMistypedAttributesAreRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 4, 4, 2}));
  ValueId w = g.AddConstant("w", RandomArray({3, 3, 2, 2}, 1));
  std::string msg = ErrorOf([&] { AddOpCall(&g, "c", "conv2d", {x, w}, {{"padding", 1}}); });
  EXPECT_NE(msg.find("%c = conv2d(%x, %w)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no attribute 'padding'"), std::string::npos) << msg;
  msg = ErrorOf([&] { AddOpCall(&g, "c", "conv2d", {x, w}, {{"pad", Ints{1, 1}}}); });
  EXPECT_NE(msg.find("attribute 'pad' is [1, 1], expected an integer"), std::string::npos) << msg;
}

TEST(GraphTest, WrongArgumentCountIsRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  std::string msg = ErrorOf([&] { AddOpCall(&g, "y", "add", {x}); });
  EXPECT_NE(msg.find("add takes 2 arguments, got 1"), std::string::npos) << msg;
}

TEST(GraphTest, CycleIsRejectedNamingItsNodes) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  ValueId a = AddOpCall(&g, "a", "add", {x, x});
  ValueId b = AddOpCall(&g, "b", "relu", {a});
  g.AddOutput(b);
  g.mutable_call(0).args[1] = b;  // a = add(x, b), b = relu(a)
  std::string msg = ErrorOf([&] { ValidateGraph(g); });
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%a = add(%x, %b)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%b = relu(%a)"), std::string::npos) << msg;
}

TEST(GraphTest, UseBeforeDefinitionIsRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  ValueId a = AddOpCall(&g, "a", "relu", {x});
  ValueId b = AddOpCall(&g, "b", "relu", {x});
  g.AddOutput(a);
  g.AddOutput(b);
  g.mutable_call(0).args[0] = b;  // a uses b, which is added after it
  std::string msg = ErrorOf([&] { ValidateGraph(g); });
  EXPECT_NE(msg.find("%a = relu(%b): argument %b is used before the call that defines it"),
            std::string::npos)
      << msg;
}

TEST(GraphTest, DanglingArgumentIsRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2}));
  g.AddOutput(AddOpCall(&g, "a", "relu", {x}));
  g.mutable_call(0).args[0] = 42;
  std::string msg = ErrorOf([&] { ValidateGraph(g); });
  EXPECT_NE(msg.find("%a = relu(%<42>): argument 42 is not a value"), std::string::npos) << msg;
}

TEST(GraphTest, GraphWithoutOutputIsRejected) {
  Graph g;
  g.AddInput("x", F32({2}));
  EXPECT_THROW(ValidateGraph(g), GraphError);
}

TEST(GraphTest, PrimFuncCallWithWrongParameterShapeIsRejected) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3}));
  Call call;
  call.kind = CallKind::kPrimFunc;
  call.op = "relu";
  call.func = LegalizeOp(*FindOp("relu"), {F32({3, 2})}, {}, "relu");
  call.args = {x};
  g.AddOutput(g.AddCall("y", call, F32({2, 3})));
  std::string msg = ErrorOf([&] { ValidateGraph(g); });
  EXPECT_NE(msg.find("%y = call_tir @relu(%x): shape mismatch"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tirtune::graph
