// The oneDNN backend: each composite its patterns make is built, run on seeded inputs and
// compared with the interpreter running the same operators (convolutions of every rank, grouped,
// depthwise, strided, dilated; dense and matrix products; biases and every post-op); what it
// cannot run is declined with the reason.
#include <gtest/gtest.h>

#include "../graph/graph_testing.h"
#include "offload_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload {
namespace {

using graph::AddOpCall;
using graph::Attrs;
using graph::F32;
using graph::Graph;
using graph::ValueId;
using graph::testing::RandomArray;

// Fuses `g` with oneDNN's patterns, runs each composite's kernel (twice: a sum's addend is
// copied in again, not accumulated) and the rest on the interpreter, and compares with the
// interpreter running `g`; returns the kernels' descriptions.
std::string RunsLikeTheInterpreter(const Graph& g, int composites = 1) {
  const LibraryBackend* dnnl = DnnlBackend();
  return testing::RunsLikeTheInterpreter(
      g, dnnl->Patterns(),
      [&](const Graph& f, const graph::Call& call, const std::vector<const NDArray*>& args,
          NDArray& out) {
        std::unique_ptr<LibraryKernel> k = dnnl->Build(f, call, {.threads = 2});
        std::vector<const void*> raw;
        for (const NDArray* a : args) raw.push_back(a->raw());
        k->Run(raw, out.raw());
        k->Run(raw, out.raw());
        return k->Describe();
      },
      composites);
}

Graph Conv(const std::string& op, std::vector<int64_t> x, std::vector<int64_t> w, Attrs attrs,
           const std::vector<std::string>& epilogue) {
  Graph g;
  ValueId v = g.AddInput("x", F32(x));
  ValueId wc = g.AddConstant("w", RandomArray(w, 1));
  v = AddOpCall(&g, "conv", op, {v, wc}, attrs);
  const graph::TensorType type = g.value(v).type;
  for (const std::string& e : epilogue) {
    if (e == "bias") {
      v = AddOpCall(&g, "bias", "bias_add", {v, g.AddConstant("b", RandomArray({w.back()}, 2))});
    } else if (e == "sum") {
      v = AddOpCall(&g, "sum", "add", {g.AddInput("y", type), v});
    } else if (e == "scale" || e == "shift") {  // a batch norm after SimplifyInference
      ValueId c = g.AddConstant(e + "_c", RandomArray({w.back()}, e == "scale" ? 5 : 6));
      v = AddOpCall(&g, e, e == "scale" ? "multiply" : "add", {v, c});
    } else if (e == "clip") {
      v = AddOpCall(&g, "clip", "clip", {v}, {{"min", -0.5}, {"max", 0.5}});
    } else {
      v = AddOpCall(&g, e, e, {v});
    }
  }
  g.AddOutput(v);
  return g;
}

// The description names the post-ops and an optimized implementation (jit:... or brgconv:... as
// the host's ISA decides), never oneDNN's reference one.
void ExpectFusedOptimized(const std::string& d, const std::string& fused) {
  EXPECT_NE(d.find(fused + "; "), std::string::npos) << d;
  EXPECT_EQ(d.find("; ref"), std::string::npos) << d;
}

TEST(DnnlBackend, ConvolutionsWithBiasesAndPostOpsMatchTheInterpreter) {
  std::string d = RunsLikeTheInterpreter(
      Conv("conv2d", {1, 8, 8, 6}, {3, 3, 6, 8}, {{"pad", 1}}, {"bias", "sum", "relu"}));
  ExpectFusedOptimized(d, "oneDNN conv2d for %relu (bias, post-ops sum + relu");
  // Grouped, strided with an odd size (oneDNN's right padding is then smaller than the left).
  RunsLikeTheInterpreter(Conv("conv2d", {1, 9, 9, 8}, {3, 3, 4, 6},
                              {{"pad", 1}, {"stride", 2}, {"groups", 2}}, {"bias", "clip"}));
  // Depthwise, dilated; then a 1x1 stride-2 with no padding (negative right padding).
  RunsLikeTheInterpreter(
      Conv("conv2d", {1, 10, 10, 8}, {3, 3, 1, 8}, {{"pad", 2}, {"dilation", 2}, {"groups", 8}},
           {"gelu"}));
  RunsLikeTheInterpreter(Conv("conv2d", {1, 8, 8, 4}, {1, 1, 4, 8}, {{"stride", 2}}, {"bias"}));
  RunsLikeTheInterpreter(Conv("conv1d", {2, 12, 4}, {3, 4, 5}, {{"pad", 1}}, {"relu", "sum"}));
  RunsLikeTheInterpreter(
      Conv("conv3d", {1, 5, 6, 6, 3}, {3, 3, 3, 3, 4}, {{"pad", 1}, {"stride", 2}}, {"bias"}));
  // A batch norm's scale and shift right after the convolution are folded into its weights and
  // bias; after an activation they are binary post-ops.
  d = RunsLikeTheInterpreter(Conv("conv2d", {1, 8, 8, 6}, {3, 3, 6, 8}, {{"pad", 1}},
                                  {"bias", "scale", "shift", "sum", "relu"}));
  ExpectFusedOptimized(d, "(bias, scale and shift folded into the weights, post-ops sum + relu");
  d = RunsLikeTheInterpreter(
      Conv("conv2d", {1, 8, 8, 6}, {3, 3, 6, 8}, {{"pad", 1}}, {"relu", "scale", "shift"}));
  ExpectFusedOptimized(d, "(no bias, post-ops relu + mul + add");
}

// Fuses `g` with oneDNN's patterns and runs its one composite with `algorithm` (as the tuner's
// library candidate of that algorithm does) against the interpreter; returns the description.
std::string RunsWithAlgorithm(const Graph& g, const std::string& algorithm) {
  const LibraryBackend* dnnl = DnnlBackend();
  return testing::RunsLikeTheInterpreter(
      g, dnnl->Patterns(),
      [&](const Graph& f, const graph::Call& call, const std::vector<const NDArray*>& args,
          NDArray& out) {
        graph::Call chosen = call;
        chosen.attrs.Set(graph::kAlgorithmAttr, algorithm);
        std::unique_ptr<LibraryKernel> k = dnnl->Build(f, chosen, {.threads = 2});
        std::vector<const void*> raw;
        for (const NDArray* a : args) raw.push_back(a->raw());
        k->Run(raw, out.raw());
        k->Run(raw, out.raw());
        EXPECT_EQ(k->ConstantMemory().size(), 2u);
        return k->Describe();
      });
}

// The algorithms oneDNN's backend offers for the first composite of `g`.
std::vector<std::string> AlgorithmsOf(const Graph& g) {
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, DnnlBackend()->Patterns());
  for (const graph::Call& c : r.graph.calls()) {
    if (c.attrs.Has(graph::kCompositeAttr)) return DnnlBackend()->Algorithms(r.graph, c);
  }
  return {};
}

// 3x3 stride-1 convolutions run as Winograd F(4x4, 3x3) and F(2x2, 3x3): edge tiles cut off
// (odd sizes), no padding, a batch of two, a folded batch norm, a sum, relu and clip.
TEST(DnnlBackend, WinogradConvolutionsMatchTheInterpreter) {
  const std::vector<std::string> both = {"winograd4", "winograd2"};
  Graph residual =
      Conv("conv2d", {1, 10, 9, 16}, {3, 3, 16, 32}, {{"pad", 1}}, {"bias", "sum", "relu"});
  EXPECT_EQ(AlgorithmsOf(residual), both);
  for (const std::string& algorithm : both) {
    std::string d = RunsWithAlgorithm(residual, algorithm);
    EXPECT_NE(d.find(algorithm == "winograd4" ? "Winograd F(4x4, 3x3)" : "Winograd F(2x2, 3x3)"),
              std::string::npos)
        << d;
    EXPECT_NE(d.find("(bias, post-ops sum + relu)"), std::string::npos) << d;
    RunsWithAlgorithm(Conv("conv2d", {2, 7, 6, 32}, {3, 3, 32, 16}, {}, {"relu"}), algorithm);
    d = RunsWithAlgorithm(Conv("conv2d", {1, 8, 8, 16}, {3, 3, 16, 16}, {{"pad", 1}},
                               {"bias", "scale", "shift", "clip"}),
                          algorithm);
    EXPECT_NE(d.find("scale and shift folded into the weights"), std::string::npos) << d;
  }
  // None for what Winograd does not run: stride 2, a 1x1 kernel, channels not a multiple of 16,
  // a post-op it does not apply; asked anyway, the kernel is declined with the reason.
  EXPECT_TRUE(AlgorithmsOf(Conv("conv2d", {1, 8, 8, 16}, {3, 3, 16, 16},
                                {{"pad", 1}, {"stride", 2}}, {"bias"}))
                  .empty());
  EXPECT_TRUE(AlgorithmsOf(Conv("conv2d", {1, 8, 8, 16}, {1, 1, 16, 16}, {}, {"bias"})).empty());
  EXPECT_TRUE(AlgorithmsOf(Conv("conv2d", {1, 8, 8, 6}, {3, 3, 6, 16}, {{"pad", 1}}, {})).empty());
  Graph gelu = Conv("conv2d", {1, 8, 8, 16}, {3, 3, 16, 16}, {{"pad", 1}}, {"gelu"});
  EXPECT_TRUE(AlgorithmsOf(gelu).empty());
  EXPECT_THROW(RunsWithAlgorithm(gelu, "winograd4"), LibraryDeclined);
  EXPECT_THROW(RunsWithAlgorithm(residual, "winograd8"), LibraryDeclined);
  // The algorithm travels in the composite's description (an artifact's, a measurement's).
  graph::PatternFusionResult r = graph::FuseOpsByPattern(residual, DnnlBackend()->Patterns());
  for (const graph::Call& c : r.graph.calls()) {
    if (!c.attrs.Has(graph::kCompositeAttr)) continue;
    Graph standalone = StandaloneComposite(r.graph, c);
    std::map<int, NDArray> constants;
    const graph::Call& call = standalone.call(0);
    for (size_t i = 0; i < call.args.size(); ++i) {
      const graph::Value& v = standalone.value(call.args[i]);
      if (v.kind == graph::ValueKind::kConstant) constants[static_cast<int>(i)] = v.data;
    }
    std::string json = CompositeWithAlgorithm(CompositeToJson(standalone), "winograd2");
    Graph back = CompositeFromJson(json, constants);
    EXPECT_EQ(back.call(0).attrs.GetString(graph::kAlgorithmAttr), "winograd2");
    EXPECT_EQ(CompositeToJson(back), json);
    EXPECT_FALSE(CompositeFromJson(CompositeWithAlgorithm(json, ""), constants)
                     .call(0)
                     .attrs.Has(graph::kAlgorithmAttr));
  }
}

// A kernel names the memory its reordered weights and bias live in (which a timer with cold
// weights evicts): readable, at least the constants' bytes; a product of two inputs has none.
TEST(DnnlBackend, AKernelNamesTheMemoryOfItsConstants) {
  for (bool constant : {true, false}) {
    Graph g = Conv("conv2d", {1, 8, 8, 6}, {3, 3, 6, 8}, {{"pad", 1}}, {"bias", "relu"});
    if (!constant) {  // a product of two matrices computed at run time
      g = Graph();
      ValueId a = g.AddInput("a", F32({8, 6}));
      g.AddOutput(AddOpCall(&g, "mm", "matmul", {a, g.AddInput("b", F32({6, 4}))}));
    }
    size_t bytes = 0, ranges = 0;
    testing::RunsLikeTheInterpreter(g, DnnlBackend()->Patterns(),
                                    [&](const Graph& f, const graph::Call& call,
                                        const std::vector<const NDArray*>& args, NDArray& out) {
                                      std::unique_ptr<LibraryKernel> k =
                                          DnnlBackend()->Build(f, call, {.threads = 2});
                                      unsigned sum = 0;
                                      for (const ByteRange& r : k->ConstantMemory()) {
                                        const auto* p = static_cast<const unsigned char*>(r.data);
                                        for (size_t i = 0; i < r.bytes; ++i) sum += p[i];
                                        bytes += r.bytes;
                                        ++ranges;
                                      }
                                      std::vector<const void*> raw;
                                      for (const NDArray* a : args) raw.push_back(a->raw());
                                      k->Run(raw, out.raw());
                                      return k->Describe() + std::to_string(sum % 2);
                                    });
    if (constant) {
      EXPECT_EQ(ranges, 2u);
      EXPECT_GE(bytes, (3 * 3 * 6 * 8 + 8) * sizeof(float));
    } else {
      EXPECT_EQ(ranges, 0u);
    }
  }
}

TEST(DnnlBackend, MatrixProductsMatchTheInterpreter) {
  Graph dense;
  ValueId x = dense.AddInput("x", F32({5, 16}));
  ValueId v = AddOpCall(&dense, "dense", "dense", {x, dense.AddConstant("w", RandomArray({12, 16}, 3))});
  v = AddOpCall(&dense, "add", "add", {v, dense.AddConstant("b", RandomArray({12}, 4))});
  dense.AddOutput(AddOpCall(&dense, "gelu", "gelu", {v}));
  std::string d = RunsLikeTheInterpreter(dense);
  EXPECT_NE(d.find("oneDNN dense for %gelu (bias, post-ops gelu; "), std::string::npos) << d;

  // GELU as exporters write it (BERT's feed-forward): x * (erf(x / sqrt(2)) + 1) * 0.5, after a
  // bias added to the product seen as [1, M, N] (a row-major view: the same memory).
  Graph bert;
  x = bert.AddInput("x", F32({4, 16}));
  v = AddOpCall(&bert, "dense", "dense", {x, bert.AddConstant("w", RandomArray({12, 16}, 3))});
  v = AddOpCall(&bert, "view", "reshape", {v}, {{"shape", graph::Ints{1, 4, 12}}});
  v = AddOpCall(&bert, "bias", "add", {v, bert.AddConstant("b", RandomArray({12}, 4))});
  auto scalar = [&](const std::string& name, double value) {
    NDArray a = NDArray::Empty({}, DataType::Float(32));
    a.SetDouble(0, value);
    return bert.AddConstant(name, a);
  };
  ValueId div = AddOpCall(&bert, "div", "divide", {v, scalar("sqrt2", 1.4142135381698608)});
  ValueId erf = AddOpCall(&bert, "erf", "erf", {div});
  ValueId plus1 = AddOpCall(&bert, "plus1", "add", {erf, scalar("one", 1.0)});
  ValueId times_x = AddOpCall(&bert, "times_x", "multiply", {v, plus1});
  bert.AddOutput(AddOpCall(&bert, "half", "multiply", {times_x, scalar("half_c", 0.5)}));
  d = RunsLikeTheInterpreter(bert);
  EXPECT_NE(d.find("oneDNN dense for %half (bias, post-ops gelu; "), std::string::npos) << d;

  Graph mm;  // both operands computed at run time (attention)
  ValueId a = mm.AddInput("a", F32({2, 4, 8}));
  ValueId b = mm.AddInput("b", F32({2, 8, 3}));
  mm.AddOutput(AddOpCall(&mm, "bmm", "batch_matmul", {a, b}));
  RunsLikeTheInterpreter(mm);
  Graph m2;
  a = m2.AddInput("a", F32({4, 8}));
  v = AddOpCall(&m2, "mm", "matmul", {a, m2.AddConstant("w", RandomArray({8, 6}, 5))});
  m2.AddOutput(AddOpCall(&m2, "relu", "relu", {v}));
  RunsLikeTheInterpreter(m2);
}

std::string CompositeOf(const Graph& g) {
  return testing::CompositeOf(g, DnnlBackend()->Patterns());
}

TEST(DnnlBackend, MatrixProductsReadTransposedAndReshapedOperandsThroughStrides) {
  Graph heads = testing::HeadsProduct(1);
  EXPECT_EQ(CompositeOf(heads), "dnnl.batch_matmul_of_views");
  std::string d = RunsLikeTheInterpreter(heads);
  EXPECT_NE(d.find("oneDNN batch_matmul for %y"), std::string::npos) << d;
  EXPECT_EQ(d.find("; ref"), std::string::npos) << d;
  // The heads' product behind a leading unit dimension, which oneDNN runs as brgemm where it
  // has that kernel (AVX-512); as a 3-D product of these strides it took gemm:jit.
  if (__builtin_cpu_supports("avx512bw")) {
    EXPECT_NE(d.find("; brg:"), std::string::npos) << d;
  }

  // A^T B with A transposed in the graph; a reshape that splits rows into a batch.
  Graph t;
  ValueId a = t.AddInput("a", F32({8, 5}));
  ValueId at = AddOpCall(&t, "at", "transpose", {a}, {{"perm", graph::Ints{1, 0}}});
  t.AddOutput(AddOpCall(&t, "mm", "matmul", {at, t.AddInput("b", F32({8, 6}))}));
  EXPECT_EQ(CompositeOf(t), "dnnl.matmul_of_views");
  // Two run-time matrices and nothing after the product: oneDNN's sgemm, A read transposed.
  EXPECT_NE(RunsLikeTheInterpreter(t).find("; dnnl_sgemm)"), std::string::npos);
  Graph split;
  a = split.AddInput("a", F32({6, 8}));
  ValueId rows = AddOpCall(&split, "rows", "reshape", {a}, {{"shape", graph::Ints{2, 3, 8}}});
  split.AddOutput(
      AddOpCall(&split, "bmm", "batch_matmul", {rows, split.AddInput("b", F32({2, 8, 4}))}));
  RunsLikeTheInterpreter(split);

  // With two batches [batch, heads] are not one stride apart after the transpose: the product
  // alone is the composite, the transposes and reshapes stay outside it.
  Graph two = testing::HeadsProduct(2);
  EXPECT_EQ(CompositeOf(two), "dnnl.batch_matmul");
  RunsLikeTheInterpreter(two);
}

TEST(DnnlBackend, PoolingMatchesTheInterpreter) {
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    Graph g;
    ValueId x = g.AddInput("x", F32({1, 9, 9, 8}));
    g.AddOutput(AddOpCall(&g, "pool", op, {x}, {{"kernel", 3}, {"stride", 2}, {"pad", 1}}));
    std::string d = RunsLikeTheInterpreter(g);
    EXPECT_NE(d.find(std::string("oneDNN ") + op), std::string::npos) << d;
  }
}

TEST(DnnlBackend, SoftmaxAlongTheLastAxisMatchesTheInterpreter) {
  for (int64_t axis : {-1, 2}) {  // the graph's softmax takes the last axis, named either way
    Graph g;
    ValueId x = g.AddInput("x", F32({2, 6, 10}));
    g.AddOutput(AddOpCall(&g, "sm", "softmax", {x}, {{"axis", axis}}));
    std::string d = RunsLikeTheInterpreter(g);
    EXPECT_NE(d.find("oneDNN softmax"), std::string::npos) << d;
    EXPECT_EQ(d.find("; ref"), std::string::npos) << d;
  }
}

TEST(DnnlBackend, TransposedConvolutionsWithBiasAndReluMatchTheInterpreter) {
  for (int64_t stride : {1, 2}) {
    std::string d =
        RunsLikeTheInterpreter(Conv("conv2d_transpose", {1, 5, 5, 8}, {4, 4, 8, 6},
                                    {{"stride", stride}, {"pad", 1}}, {"bias", "relu"}));
    EXPECT_NE(d.find("oneDNN conv2d_transpose"), std::string::npos) << d;
    ExpectFusedOptimized(d, "bias, post-ops relu");
  }
}

TEST(DnnlBackend, WhatItCannotRunStaysOutOrIsDeclinedWithTheReason) {
  // A runtime weight, or a bias after the activation: no composite / a shorter one.
  Graph g;
  ValueId x = g.AddInput("x", F32({1, 6, 6, 2}));
  ValueId w = g.AddInput("w", F32({3, 3, 2, 4}));
  g.AddOutput(AddOpCall(&g, "conv", "conv2d", {x, w}, {{"pad", 1}}));
  RunsLikeTheInterpreter(g, 0);
  // A bias after the activation is a per-channel add (a binary post-op).
  std::string d =
      RunsLikeTheInterpreter(Conv("conv2d", {1, 6, 6, 2}, {3, 3, 2, 4}, {}, {"relu", "bias"}));
  EXPECT_NE(d.find("no bias, post-ops relu + add"), std::string::npos) << d;

  // A composite of another pattern is declined by Build, naming the operator.
  Graph s;
  ValueId in = s.AddInput("x", F32({2, 8}));
  s.AddOutput(AddOpCall(&s, "ln", "exp", {in}));
  graph::PatternFusionResult r =
      graph::FuseOpsByPattern(s, {{"dnnl.exp", graph::IsOp("exp", {graph::Wildcard()})}});
  try {
    DnnlBackend()->Build(r.graph, r.graph.call(0), {});
    FAIL() << "no error";
  } catch (const LibraryDeclined& e) {
    EXPECT_NE(std::string(e.what()).find("it starts with exp"), std::string::npos) << e.what();
  }
}

// The artifact's form of a composite: to JSON and back gives the same kernel; a damaged text or a
// missing constant is a UserError naming what is wrong.
TEST(CompositeJson, RoundTripsAndRefusesDamage) {
  Graph g = Conv("conv2d", {1, 6, 6, 2}, {3, 3, 2, 4}, {{"pad", 1}}, {"bias", "sum", "clip"});
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, DnnlBackend()->Patterns());
  ASSERT_EQ(r.graph.calls().size(), 1u);
  Graph standalone = StandaloneComposite(r.graph, r.graph.call(0));
  std::string json = CompositeToJson(standalone);
  std::map<int, NDArray> constants;
  const graph::Call& call = standalone.call(0);
  for (size_t i = 0; i < call.args.size(); ++i) {
    const graph::Value& v = standalone.value(call.args[i]);
    if (v.kind == graph::ValueKind::kConstant) constants[static_cast<int>(i)] = v.data;
  }
  Graph back = CompositeFromJson(json, constants);
  EXPECT_EQ(graph::PrintGraph(back), graph::PrintGraph(standalone));
  EXPECT_EQ(CompositeToJson(back), json);

  auto error_of = [&](const std::string& text, const std::map<int, NDArray>& c) {
    try {
      CompositeFromJson(text, c);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(json.substr(0, json.size() / 2), constants).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of(json, {}).find("its data is missing"), std::string::npos);
  // A constant's data may come in another shape with as many elements (a reshape), not with
  // another count.
  std::map<int, NDArray> flat = constants, short_by_one = constants;
  for (auto& [index, data] : flat) data = data.Reshaped({data.size()});
  for (auto& [index, data] : short_by_one) data = NDArray::Empty({data.size() - 1}, data.dtype());
  EXPECT_EQ(graph::PrintGraph(CompositeFromJson(json, flat)), graph::PrintGraph(standalone));
  EXPECT_NE(error_of(json, short_by_one).find("of another type"), std::string::npos);
  std::string bad_op = json;
  bad_op.replace(bad_op.find("\"conv2d\""), 8, "\"conv9d\"");
  EXPECT_NE(error_of(bad_op, constants).find("conv9d"), std::string::npos);
  std::string bad_ref = json;
  bad_ref.replace(bad_ref.find("\"args\":[0,1]"), 12, "\"args\":[0,9]");
  EXPECT_NE(error_of(bad_ref, constants).find("out of range"), std::string::npos)
      << error_of(bad_ref, constants);
}

}  // namespace
}  // namespace tirtune::offload
