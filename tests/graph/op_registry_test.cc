// The operator registry: every operator's example infers a type, legalizes to a well-formed
// PrimFunc the interpreter runs, and a few operators compute what their definition says.
#include "tirtune/graph/op_registry.h"

#include <gtest/gtest.h>

#include <cmath>

#include "graph_testing.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/verify.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using testing::AllClose;
using testing::RandomArray;

TEST(OpRegistryTest, HasTheLibrarysOperators) {
  for (const char* name :
       {"add",        "avg_pool2d", "batch_matmul", "batch_norm", "bias_add",
        "clip",       "concat",     "conv2d",       "dense",      "divide",
        "erf",        "exp",        "flatten",      "gelu",       "global_avg_pool2d",
        "layer_norm", "matmul",     "max_pool2d",   "multiply",   "pad",
        "relu",       "reshape",    "sigmoid",      "softmax",    "subtract",
        "tanh",       "transpose"}) {
    EXPECT_NE(FindOp(name), nullptr) << name;
  }
  EXPECT_EQ(FindOp("frobnicate"), nullptr);
}

TEST(OpRegistryTest, EveryExampleLegalizesToAWellFormedFunctionThatRuns) {
  for (const OpDef& op : AllOps()) {
    SCOPED_TRACE(op.name);
    TensorType out = InferType(op, op.example_inputs, op.example_attrs);
    PrimFunc func = LegalizeOp(op, op.example_inputs, op.example_attrs, op.name);
    EXPECT_EQ(func->name, op.name);
    ASSERT_EQ(func->params.size(), op.example_inputs.size() + 1);
    EXPECT_TRUE(VerifyWellFormed(func).empty());
    std::vector<NDArray> args = MakeRandomArgs(func, 3);
    EXPECT_EQ(args.back().shape(), out.shape);
    EXPECT_NO_THROW(Interpret(func, args));
  }
}

TEST(OpRegistryTest, DefaultsAreFilledIn) {
  Attrs full = CheckAttrs(*FindOp("conv2d"), {{"pad", 1}});
  EXPECT_EQ(full.GetInt("pad"), 1);
  EXPECT_EQ(full.GetInt("stride"), 1);
  EXPECT_EQ(full.GetInt("dilation"), 1);
  EXPECT_EQ(full.GetInt("groups"), 1);
}

// Runs one operator call on the given arrays.
NDArray RunOp(const std::string& op, const std::vector<NDArray>& args, const Attrs& attrs = {}) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < args.size(); ++i) {
    ids.push_back(g.AddConstant("c" + std::to_string(i), args[i]));
  }
  g.AddOutput(AddOpCall(&g, "y", op, ids, attrs));
  return RunGraph(g, {})[0];
}

TEST(OpRegistryTest, BinaryOperatorsBroadcastLikeNumPy) {
  NDArray a = RandomArray({2, 3, 4}, 1);
  NDArray b = RandomArray({3, 1}, 2);
  NDArray sum = RunOp("add", {a, b});
  NDArray quotient = RunOp("divide", {a, b});
  ASSERT_EQ(sum.shape(), (std::vector<int64_t>{2, 3, 4}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        int64_t flat = (i * 3 + j) * 4 + k;
        float x = a.data<float>()[flat], y = b.data<float>()[j];
        EXPECT_FLOAT_EQ(sum.data<float>()[flat], x + y);
        EXPECT_FLOAT_EQ(quotient.data<float>()[flat], x / y);
      }
    }
  }
}

TEST(OpRegistryTest, ConcatJoinsAnyNumberOfInputs) {
  NDArray a = RandomArray({2, 1}, 1), b = RandomArray({2, 2}, 2), c = RandomArray({2, 1}, 3);
  NDArray out = RunOp("concat", {a, b, c}, {{"axis", -1}});
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{2, 4}));
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out.data<float>()[i * 4 + 0], a.data<float>()[i]);
    EXPECT_EQ(out.data<float>()[i * 4 + 1], b.data<float>()[i * 2]);
    EXPECT_EQ(out.data<float>()[i * 4 + 2], b.data<float>()[i * 2 + 1]);
    EXPECT_EQ(out.data<float>()[i * 4 + 3], c.data<float>()[i]);
  }
}

TEST(OpRegistryTest, ReshapeResolvesZeroAndMinusOne) {
  Graph g;
  ValueId x = g.AddInput("x", F32({2, 3, 4}));
  EXPECT_EQ(g.value(AddOpCall(&g, "a", "reshape", {x}, {{"shape", Ints{0, -1}}})).type,
            F32({2, 12}));
  EXPECT_EQ(g.value(AddOpCall(&g, "b", "flatten", {x}, {{"axis", 2}})).type, F32({6, 4}));
  EXPECT_THROW(AddOpCall(&g, "c", "reshape", {x}, {{"shape", Ints{5, -1}}}), UserError);
  NDArray data = RandomArray({2, 3, 4}, 4);
  EXPECT_TRUE(AllClose(data, [&] {
    NDArray out = RunOp("reshape", {data}, {{"shape", Ints{4, -1}}});
    NDArray back = NDArray::Empty({2, 3, 4}, DataType::Float(32));
    for (int64_t i = 0; i < out.size(); ++i) back.SetDouble(i, out.GetDouble(i));
    return back;
  }()));
}

TEST(OpRegistryTest, TransposeMovesAxes) {
  NDArray x = RandomArray({2, 3, 4}, 5);
  NDArray out = RunOp("transpose", {x}, {{"perm", Ints{2, 0, 1}}});
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{4, 2, 3}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(out.data<float>()[(k * 2 + i) * 3 + j], x.data<float>()[(i * 3 + j) * 4 + k]);
      }
    }
  }
}

TEST(OpRegistryTest, SoftmaxNormalizesTheLastAxisOfAnyRank) {
  NDArray x = RandomArray({2, 3, 4}, 6);
  NDArray out = RunOp("softmax", {x});
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{2, 3, 4}));
  for (int64_t row = 0; row < 6; ++row) {
    double total = 0;
    for (int64_t k = 0; k < 4; ++k) total += std::exp(x.GetDouble(row * 4 + k));
    for (int64_t k = 0; k < 4; ++k) {
      EXPECT_NEAR(out.GetDouble(row * 4 + k), std::exp(x.GetDouble(row * 4 + k)) / total, 1e-6);
    }
  }
}

TEST(OpRegistryTest, MeanReducesTheGivenAxes) {
  NDArray x = RandomArray({2, 3, 4}, 8);
  NDArray kept = RunOp("mean", {x}, {{"axes", Ints{1}}});
  NDArray dropped = RunOp("mean", {x}, {{"axes", Ints{-2}}, {"keepdims", 0}});
  ASSERT_EQ(kept.shape(), (std::vector<int64_t>{2, 1, 4}));
  ASSERT_EQ(dropped.shape(), (std::vector<int64_t>{2, 4}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < 4; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < 3; ++j) sum += x.GetDouble((i * 3 + j) * 4 + k);
      EXPECT_NEAR(kept.GetDouble(i * 4 + k), sum / 3, 1e-6);
      EXPECT_NEAR(dropped.GetDouble(i * 4 + k), sum / 3, 1e-6);
    }
  }
}

TEST(OpRegistryTest, SoftmaxRejectsAnAxisItCannotNormalize) {
  Graph g;
  ValueId x = g.AddInput("x", F32({3, 4}));
  EXPECT_THROW(AddOpCall(&g, "s", "softmax", {x}, {{"axis", 0}}), UserError);
  EXPECT_NO_THROW(AddOpCall(&g, "t", "softmax", {x}, {{"axis", 1}}));
}

}  // namespace
}  // namespace tirtune::graph
